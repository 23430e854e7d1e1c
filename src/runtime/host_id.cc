#include "runtime/host_id.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

#include "coord/terminal_text.h"
#include "coord/utf8.h"
#include "spmd/error.h"

namespace spmd {

std::string local_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "unknown-host";
  // The coordination protocol carries it as text: a name that is not UTF-8 (the kernel takes any
  // bytes) travels with those bytes escaped, as the status table would print them.
  return invalid_utf8_at(buf) == std::string::npos ? std::string(buf) : terminal_safe(buf);
}

std::string local_host_id(const EnvReader& env) {
  if (auto id = env.get("SPMD_HOST_ID"); id && !id->empty()) {
    if (const size_t at = invalid_utf8_at(*id); at != std::string::npos) {
      throw InvalidArgument(fmt::format(
          "SPMD_HOST_ID is not valid UTF-8 (byte 0x{:02x} at offset {}): set it to text, such as "
          "the host's name",
          static_cast<unsigned char>((*id)[at]), at));
    }
    return *id;
  }
  std::string boot_id;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot_id);
  return boot_id.empty() ? local_hostname() : local_hostname() + "/" + boot_id;
}

}  // namespace spmd
