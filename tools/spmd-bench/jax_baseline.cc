#include "spmd-bench/jax_baseline.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/subprocess.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

// The exit status of `command` run by the shell (its output shown), or -1 when it did not run;
// coreutils' timeout ends it after `seconds` (status 124), so an unreachable PyPI cannot hold the
// bench forever.
int shell(const std::string& command, int seconds = 900) {
  const std::string bounded = fmt::format("timeout --kill-after=10 {} {}", seconds, command);
  const int status = std::system(bounded.c_str());  // NOLINT(cert-env33-c): fixed build paths
  return status == -1 ? -1 : WEXITSTATUS(status);
}

bool imports(const std::string& module) {
  return std::filesystem::exists(bench_python()) &&
         shell(fmt::format("'{}' -c 'import {}' >/dev/null 2>&1", bench_python(), module), 120) ==
             0;
}

}  // namespace

bool ensure_python_module(const std::string& module, const std::string& requirements) {
  if (imports(module)) return true;
  fmt::print(stderr, "spmd-bench: {} is not in {}; installing {} there\n", module, SPMD_BENCH_VENV,
             requirements);
  const bool made = std::filesystem::exists(bench_python()) ||
                    shell(fmt::format("python3 -m venv '{}'", SPMD_BENCH_VENV)) == 0;
  if (made &&
      shell(fmt::format("'{}' -m pip install --quiet --disable-pip-version-check -r '{}'",
                        bench_python(), requirements)) == 0 &&
      imports(module)) {
    return true;
  }
  fmt::print(stderr,
             "spmd-bench: installing {} into {} failed (PyPI unreachable? `make venv` makes the "
             "environment)\n",
             requirements, SPMD_BENCH_VENV);
  return false;
}

bool ensure_jax() {
  // Asked once per run: every interleaved point starts a JAX job, and importing JAX takes a
  // second. A failure is asked again (and says so again) rather than remembered.
  static bool there = false;
  if (!there) there = ensure_python_module("jax", SPMD_BENCH_REQUIREMENTS);
  return there;
}

namespace {

std::string& jax_platform() {
  static std::string platform = "cpu";
  return platform;
}

}  // namespace

void set_jax_platform(const std::string& platform) { jax_platform() = platform; }

std::vector<std::string> run_jax_job(int processes, const std::string& mode,
                                     const std::vector<std::string>& args, bool bind) {
  if (!ensure_jax()) return {};
  const std::string script = (self_dir() / "jax_worker.py").string();
  const std::string address = "127.0.0.1:" + std::to_string(tools::free_port());
  std::vector<std::vector<std::string>> argvs;
  std::vector<EnvList> envs;
  for (int i = 0; i < processes; ++i) {
    std::vector<std::string> argv = {
        bench_python(),    script,          mode, address, std::to_string(processes),
        std::to_string(i), bind ? "1" : "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    argvs.push_back(std::move(argv));
    envs.push_back({{"JAX_PLATFORMS", jax_platform()},
                    {"XLA_FLAGS", "--xla_force_host_platform_device_count=1"},
                    {"PYTHONPATH", SPMD_BENCH_PYTHONPATH}});
  }
  return run_workers(argvs, envs);
}

nlohmann::ordered_json side_by_side(int rounds, const std::function<nlohmann::json()>& spmd,
                                    const std::function<nlohmann::json()>& jax,
                                    const std::vector<JaxRatio>& ratios) {
  nlohmann::json spmd_row, jax_row;
  std::map<std::string, std::vector<double>> per_round, spmd_values, jax_values;
  bool correct = true;
  for (int r = 0; r < rounds; ++r) {
    spmd_row = spmd();
    if (!spmd_row.is_object()) return nullptr;
    correct &= spmd_row.value("correct", true);
    jax_row = jax();
    for (const JaxRatio& q : ratios) {
      if (!spmd_row.contains(q.spmd_field)) continue;
      const double ours = spmd_row[q.spmd_field].get<double>();
      spmd_values[q.name].push_back(ours);
      if (!jax_row.is_object() || !jax_row.contains(q.jax_field)) continue;
      const double theirs = jax_row[q.jax_field].get<double>();
      jax_values[q.name].push_back(theirs);
      per_round[q.name].push_back(q.speed ? theirs / ours : ours / theirs);
    }
  }
  nlohmann::ordered_json out;
  out["rounds"] = rounds;
  for (const JaxRatio& q : ratios) {
    if (spmd_values.count(q.name) != 0) out[q.spmd_field] = median(spmd_values[q.name]);
    if (per_round.count(q.name) == 0) continue;
    out["jax_" + q.jax_field] = median(jax_values[q.name]);
    out[q.name] = median(per_round[q.name]);
    out[q.name + "_rounds"] = per_round[q.name];
  }
  out["correct"] = correct;
  out["spmd"] = spmd_row;
  out["jax"] = jax_row.is_object() ? jax_row : nlohmann::json("not run (see above)");
  return out;
}

int run_beside_jax(const std::string& title, int processes,
                   const std::vector<std::string>& spmd_worker, const std::string& jax_mode,
                   const std::vector<std::string>& jax_args, int rounds, bool json,
                   const std::vector<JaxRatio>& ratios,
                   const std::function<void(nlohmann::ordered_json&)>& check) {
  auto first_row = [](const std::vector<std::string>& rows) {
    return rows.empty() ? nlohmann::json() : nlohmann::json::parse(rows.front(), nullptr, false);
  };
  nlohmann::ordered_json row = side_by_side(
      rounds, [&] { return first_row(spmd_job_rows(processes, spmd_worker)); },
      [&] { return first_row(run_jax_job(processes, jax_mode, jax_args, /*bind=*/false)); },
      ratios);
  if (row.is_null()) return 1;
  if (check) check(row);
  if (!json) fmt::print("{}, {} interleaved rounds:\n", title, rounds);
  fmt::print("{}\n", row.dump());
  return row.value("correct", false) ? 0 : 1;
}

bool plot_collectives(const std::vector<std::string>& rows, const std::string& png) {
  if (!ensure_python_module("matplotlib", SPMD_BENCH_PLOT_REQUIREMENTS)) return false;
  const std::filesystem::path data =
      std::filesystem::temp_directory_path() / fmt::format("spmd-bench-plot-{}.jsonl", ::getpid());
  {
    std::ofstream out(data);
    for (const std::string& row : rows) out << row << "\n";
  }
  const std::string script = (self_dir() / "plot_collectives.py").string();
  const int status =
      shell(fmt::format("'{}' '{}' '{}' '{}'", bench_python(), script, data.string(), png));
  std::filesystem::remove(data);
  if (status != 0) fmt::print(stderr, "spmd-bench: plot_collectives.py failed ({})\n", status);
  return status == 0;
}

}  // namespace spmd::bench
