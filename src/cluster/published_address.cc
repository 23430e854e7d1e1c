#include "cluster/published_address.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spmd/error.h"

namespace spmd {
namespace {

int free_port_on_all_interfaces() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int err = errno;
  close(fd);
  if (!ok) throw Error(fmt::format("cannot find a free port: {}", std::strerror(err)));
  return ntohs(addr.sin_port);
}

}  // namespace

std::string address_to_publish(const EnvReader& env) {
  std::string host;
  if (auto h = env.get("SPMD_COORDINATOR_HOST"); h && !h->empty()) {
    host = *h;
  } else {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') {
      throw Error("cannot read this machine's hostname; set SPMD_COORDINATOR_HOST");
    }
    host = buf;
  }
  const int port = env.get_int("SPMD_COORDINATOR_PORT", 1, 65535).value_or(0);
  const int chosen = port ? port : free_port_on_all_interfaces();
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, chosen);
  return fmt::format("{}:{}", host, chosen);
}

}  // namespace spmd
