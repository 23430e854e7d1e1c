#include "spmd-bench/cores_bench.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

std::string worker_script() { return (self_dir() / "cores_bench_worker.py").string(); }

EnvList python_env() { return {{"PYTHONPATH", SPMD_BENCH_PYTHONPATH}, {"JAX_PLATFORMS", "cpu"}}; }

// The first JSON row of `processes` Python workers run as one spmd job with `args`; null when
// none printed one.
nlohmann::json job_row(int processes, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {bench_python(), worker_script()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto rows = job_rows(processes, argv, python_env());
  if (rows.empty()) return nullptr;
  return nlohmann::json::parse(rows.front(), nullptr, /*allow_exceptions=*/false);
}

// ops: each row's JAX/spmd speed per round, its last figures, and the limits.
void ops_rounds(const CoresBenchOptions& o, nlohmann::ordered_json& out) {
  std::map<std::string, std::vector<double>> speeds, peak_fraction, read_fraction;
  nlohmann::json last;
  for (int r = 0; r < o.rounds; ++r) {
    const auto row = job_row(1, {"ops", std::to_string(o.iterations)});
    if (!row.is_object()) break;
    const auto& limits = row["limits"];
    for (const auto& [name, v] : row.items()) {
      if (!v.is_object() || !v.contains("speed")) continue;
      speeds[name].push_back(v["speed"]);
      if (v.contains("spmd_gflops")) {
        peak_fraction[name].push_back(v["spmd_gflops"].get<double>() /
                                      limits["sgemm_peak_gflops"].get<double>());
      }
      if (v.contains("spmd_gbps")) {
        read_fraction[name].push_back(v["spmd_gbps"].get<double>() /
                                      limits["read_gbps"].get<double>());
      }
    }
    last = row;
  }
  if (last.is_null()) return;
  out["jax"] = last["jax"];
  if (last.contains("environment")) out["environment"] = last["environment"];
  out["limits_last_round"] = last["limits"];
  for (const auto& [name, s] : speeds) {
    nlohmann::ordered_json r;
    r["spmd_speed_over_jax_median_round"] = median(s);
    r["rounds"] = s;
    r["spmd_ms_last"] = last[name]["spmd_ms"];
    r["jax_ms_last"] = last[name]["jax_ms"];
    if (peak_fraction.contains(name)) r["of_sgemm_peak"] = median(peak_fraction[name]);
    if (read_fraction.contains(name)) r["of_read_speed"] = median(read_fraction[name]);
    out["1x1 " + name] = r;
  }
}

// steps: 1 × 2 devices and 2 processes × 1 device against 1 × 1, per round.
void step_rounds(const CoresBenchOptions& o, nlohmann::ordered_json& out) {
  const std::string it = std::to_string(o.iterations);
  std::map<std::string, std::vector<double>> ratios;
  nlohmann::ordered_json last;
  for (int r = 0; r < o.rounds; ++r) {
    const auto one = job_row(1, {"steps", "1", it});
    const auto two_devices = job_row(1, {"steps", "2", it});
    const auto two_processes = job_row(2, {"steps", "1", it});
    if (!one.is_object() || !two_devices.is_object() || !two_processes.is_object()) break;
    for (const char* step : {"mlp_step_ms", "transformer_step_ms"}) {
      const double base = one[step];
      ratios[fmt::format("{} 1x2 over 1x1", step)].push_back(two_devices[step].get<double>() /
                                                             base);
      ratios[fmt::format("{} 2x1 over 1x1", step)].push_back(two_processes[step].get<double>() /
                                                             base);
    }
    last["1x1"] = one;
    last["1x2"] = two_devices;
    last["2x1"] = two_processes;
  }
  for (const auto& [name, r] : ratios) {
    out["steps " + name + " median round"] = median(r);
    out["steps " + name + " rounds"] = r;
  }
  out["steps_last_round"] = last;
}

}  // namespace

int run_cores_bench(const CoresBenchOptions& o) {
  nlohmann::ordered_json out;
  ops_rounds(o, out);
  step_rounds(o, out);
  if (out.empty()) {
    out["error"] = "a worker did not run (is the build's venv there with the spmd package? `make`)";
    fmt::print("{}\n", out.dump());
    return 1;
  }
  if (!o.json) fmt::print("every core at work, spmd beside JAX (speed = JAX time / spmd time):\n");
  fmt::print("{}\n", out.dump(o.json ? -1 : 2));
  return 0;
}

}  // namespace spmd::bench
