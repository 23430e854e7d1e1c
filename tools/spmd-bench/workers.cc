#include "spmd-bench/workers.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "common/subprocess.h"

namespace spmd::bench {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The longest a benchmark's workers may take before they are stopped.
constexpr auto kImplTimeout = std::chrono::minutes(20);

}  // namespace

fs::path self_dir() { return fs::read_symlink("/proc/self/exe").parent_path(); }

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::vector<std::string> run_workers(const std::vector<std::vector<std::string>>& argvs,
                                     const std::vector<EnvList>& envs) {
  std::vector<tools::Child> children;
  for (size_t i = 0; i < argvs.size(); ++i) {
    tools::SpawnOptions so;
    so.argv = argvs[i];
    so.env = envs[i];
    so.pipe_output = i == 0;
    so.merge_stderr = true;
    so.new_process_group = true;
    children.push_back(tools::spawn(so));
  }
  const std::string output = tools::read_all(children[0].out_fd, kImplTimeout);
  for (const auto& c : children) {
    auto status = tools::wait_or_kill(c.pid, 30s, true);
    if (!status || status->code != 0) {
      fmt::print(stderr, "spmd-bench: {} {}\n", argvs[0][0],
                 status ? status->to_string() : "did not exit; killed");
    }
  }
  std::vector<std::string> rows;
  std::stringstream ss(output);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.starts_with("{")) {
      rows.push_back(line);
    } else if (!line.empty()) {
      fmt::print(stderr, "{}\n", line);
    }
  }
  return rows;
}

EnvList spmd_worker_env(const std::string& address, int n, int id) {
  return {{"SPMD_COORDINATOR_ADDRESS", address},
          {"SPMD_NUM_PROCESSES", std::to_string(n)},
          {"SPMD_PROCESS_ID", std::to_string(id)},
          {"SPMD_CPU_DEVICES", "1"}};
}

}  // namespace spmd::bench
