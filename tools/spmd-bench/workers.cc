#include "spmd-bench/workers.h"

#include <fmt/format.h>
#include <spmd/spmd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/subprocess.h"

namespace spmd::bench {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The longest a benchmark's workers may take before they are stopped.
constexpr auto kImplTimeout = std::chrono::minutes(20);

}  // namespace

const std::string& bench_python() {
  static const std::string python = [] {
    const char* named = std::getenv("SPMD_BENCH_PYTHON");
    return std::string(named != nullptr && *named != '\0' ? named : SPMD_BENCH_PYTHON);
  }();
  return python;
}

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void print_row(const nlohmann::ordered_json& row) {
  if (process_index() != 0) return;
  fmt::print("{}\n", row.dump());
  std::fflush(stdout);
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double timed(int iterations, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  t.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) t.push_back(seconds_of(f));
  return median(t);
}

std::pair<double, double> timed_side_by_side(int iterations, const std::function<void()>& f,
                                             const std::function<void()>& g) {
  f();
  g();
  std::vector<double> tf, tg;
  for (int i = 0; i < iterations; ++i) {
    if (i % 2 == 0) {
      tf.push_back(seconds_of(f));
      tg.push_back(seconds_of(g));
    } else {
      tg.push_back(seconds_of(g));
      tf.push_back(seconds_of(f));
    }
  }
  return {median(tf), median(tg)};
}

double timed_phase(const std::string& id, const std::function<void()>& f) {
  using Clock = std::chrono::steady_clock;
  auto& kv = distributed::client();
  const auto timeout = std::chrono::minutes(10);
  kv.wait_at_barrier(id + "/start", timeout);
  const auto t0 = Clock::now();
  f();
  kv.wait_at_barrier(id + "/end", timeout);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<std::string> job_rows(int processes, const std::vector<std::string>& argv,
                                  const EnvList& env) {
  const std::string address = "127.0.0.1:" + std::to_string(tools::free_port());
  std::vector<std::vector<std::string>> argvs(static_cast<size_t>(processes), argv);
  std::vector<EnvList> envs;
  for (int i = 0; i < processes; ++i) {
    EnvList e = env;
    for (auto& kv : spmd_worker_env(address, processes, i)) e.push_back(std::move(kv));
    envs.push_back(std::move(e));
  }
  return run_workers(argvs, envs);
}

std::vector<std::string> spmd_job_rows(int processes, const std::vector<std::string>& worker_args) {
  std::vector<std::string> argv = {(self_dir() / "spmd-bench").string()};
  argv.insert(argv.end(), worker_args.begin(), worker_args.end());
  return job_rows(processes, argv, {});
}

int run_spmd_job(int processes, const std::vector<std::string>& worker_args,
                 const std::string& title, bool json) {
  const auto rows = spmd_job_rows(processes, worker_args);
  if (rows.empty()) return 1;
  if (!json) fmt::print("{}\n", title);
  fmt::print("{}\n", rows.front());
  const auto row = nlohmann::json::parse(rows.front(), nullptr, /*allow_exceptions=*/false);
  return row.is_object() && row.value("correct", false) ? 0 : 1;
}

ScratchDir::ScratchDir(const std::string& requested, const std::string& prefix) {
  namespace fs = std::filesystem;
  path_ = requested;
  if (path_.empty()) {
    path_ = (fs::temp_directory_path() / fmt::format("{}-{}", prefix, ::getpid())).string();
    made_ = true;
  }
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  if (!made_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace spmd::bench
