#include "spmd-bench/fd_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace spmd::bench {

void raise_fd_limit(int needed) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur >= static_cast<rlim_t>(needed)) return;
  rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, static_cast<rlim_t>(needed));
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < static_cast<rlim_t>(needed)) {
    throw std::runtime_error("needs " + std::to_string(needed) +
                             " open files but the hard limit is " + std::to_string(rl.rlim_max) +
                             "; raise 'ulimit -Hn' or use more --helpers");
  }
}

}  // namespace spmd::bench
