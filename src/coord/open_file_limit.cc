#include "coord/open_file_limit.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>

#include "spmd/error.h"

namespace spmd {

void raise_open_file_limit(int needed, const char* who) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur >= static_cast<rlim_t>(needed)) return;
  rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, static_cast<rlim_t>(needed));
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < static_cast<rlim_t>(needed)) {
    throw Error(fmt::format(
        "{} needs {} open files, but this process may open at most {} (the hard limit, "
        "'ulimit -Hn'); raise it (limits.conf, or LimitNOFILE= for a service){}",
        who, needed, rl.rlim_max,
        std::string(who).find("spmd-bench") != std::string::npos ? ", or use more --helpers" : ""));
  }
}

}  // namespace spmd
