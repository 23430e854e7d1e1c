#include "runtime/host_id.h"

#include <unistd.h>

#include <fstream>

namespace spmd {

std::string local_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "unknown-host";
  return buf;
}

std::string local_host_id(const EnvReader& env) {
  if (auto id = env.get("SPMD_HOST_ID"); id && !id->empty()) return *id;
  std::string boot_id;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot_id);
  return boot_id.empty() ? local_hostname() : local_hostname() + "/" + boot_id;
}

}  // namespace spmd
