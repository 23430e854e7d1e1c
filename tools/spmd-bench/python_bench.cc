#include "spmd-bench/python_bench.h"

#include <fmt/format.h>
#include <spmd/spmd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "spmd-bench/train_bench.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

// One JSON row of a fresh process; null when it did not print one.
nlohmann::json one_row(const std::vector<std::string>& argv, const EnvList& env) {
  const auto rows = run_workers({argv}, {env});
  if (rows.empty()) return nullptr;
  return nlohmann::json::parse(rows.front());
}

nlohmann::json python_row(const std::string& mode, int iterations) {
  const std::string script = (self_dir() / "python_bench_worker.py").string();
  return one_row({bench_python(), script, mode, std::to_string(iterations)},
                 {{"PYTHONPATH", SPMD_BENCH_PYTHONPATH}, {"JAX_PLATFORMS", "cpu"}});
}

// Per name in `mode`'s rows ({name: {spmd_ms, jax_ms, …}}), spmd's time over JAX's in each of
// o.rounds fresh processes (fewer where one printed nothing), and the last row.
std::pair<std::map<std::string, std::vector<double>>, nlohmann::json> ratios_over_rounds(
    const std::string& mode, const PythonBenchOptions& o) {
  std::map<std::string, std::vector<double>> ratios;
  nlohmann::json last;
  for (int r = 0; r < o.rounds; ++r) {
    const auto t = python_row(mode, o.iterations);
    if (t.is_null()) break;
    for (const auto& [name, v] : t.items()) {
      ratios[name].push_back(v["spmd_ms"].get<double>() / v["jax_ms"].get<double>());
    }
    last = t;
  }
  return {ratios, last};
}

nlohmann::json cxx_step_row(int iterations) {
  return one_row({(self_dir() / "spmd-bench").string(), "python-cxx-step", "--iterations",
                  std::to_string(iterations)},
                 {{"SPMD_NUM_PROCESSES", "1"}, {"SPMD_CPU_DEVICES", "1"}});
}

}  // namespace

int run_python_cxx_step_worker(const PythonBenchOptions& o) {
  distributed::initialize();
  nlohmann::ordered_json row;
  row["cxx_step_s"] = mlp_step_seconds_on_one_device(o.iterations);
  print_row(row);
  return 0;
}

int run_python_bench(const PythonBenchOptions& o) {
  std::vector<double> dispatch_ratio, step_ratio, spmd_us, jax_us, jax_async_us, py_s, cxx_s;
  std::vector<double> scalar_ratio, spmd_scalar_us, jax_scalar_us;
  std::string version;
  for (int r = 0; r < o.rounds; ++r) {
    const auto d = python_row("dispatch", o.iterations);
    const auto p = python_row("step", o.iterations);
    const auto c = cxx_step_row(o.iterations);
    if (d.is_null() || p.is_null() || c.is_null()) break;
    version = d.value("jax", "");
    spmd_us.push_back(d["spmd_us"]);
    jax_us.push_back(d["jax_us"]);
    jax_async_us.push_back(d["jax_async_dispatch_us"]);
    dispatch_ratio.push_back(spmd_us.back() / jax_us.back());
    spmd_scalar_us.push_back(d["spmd_scalar_us"]);
    jax_scalar_us.push_back(d["jax_scalar_us"]);
    scalar_ratio.push_back(spmd_scalar_us.back() / jax_scalar_us.back());
    py_s.push_back(p["python_step_s"]);
    cxx_s.push_back(c["cxx_step_s"]);
    step_ratio.push_back(py_s.back() / cxx_s.back());
  }
  nlohmann::ordered_json row;
  if (dispatch_ratio.empty()) {
    row["error"] = "a worker did not run (is the build's venv there with the spmd package? `make`)";
    fmt::print("{}\n", row.dump());
    return 1;
  }
  row["jax"] = version;
  row["dispatch_spmd_us"] = median(spmd_us);
  row["dispatch_jax_us"] = median(jax_us);
  row["dispatch_jax_async_us"] = median(jax_async_us);
  row["dispatch_spmd_over_jax_median_round"] = median(dispatch_ratio);
  row["dispatch_spmd_over_jax_rounds"] = dispatch_ratio;
  row["dispatch_python_float_spmd_us"] = median(spmd_scalar_us);
  row["dispatch_python_float_jax_us"] = median(jax_scalar_us);
  row["dispatch_python_float_spmd_over_jax_median_round"] = median(scalar_ratio);
  row["step_python_s"] = median(py_s);
  row["step_cxx_s"] = median(cxx_s);
  row["step_python_over_cxx_median_round"] = median(step_ratio);
  row["step_python_over_cxx_rounds"] = step_ratio;
  // exp, log, log1p, tanh and logistic on 2^22 float32s beside JAX, the median of each ratio
  // over rounds.
  const auto [ratios, last] = ratios_over_rounds("transcendentals", o);
  for (const auto& [name, r] : ratios) {
    row["transcendental_" + name + "_spmd_over_jax"] = median(r);
    row["transcendental_" + name + "_bit_for_bit"] = last[name]["bit_for_bit"];
  }
  // Forward mode (spmd's double vjp) and rematerialisation beside JAX, likewise, with the
  // values' largest relative difference from JAX's.
  const auto [derivative_ratios, derivative_last] = ratios_over_rounds("derivatives", o);
  for (const auto& [name, r] : derivative_ratios) {
    const nlohmann::json& v = derivative_last[name];
    row["derivative_" + name + "_spmd_over_jax"] = median(r);
    row["derivative_" + name + "_spmd_ms"] = v["spmd_ms"];
    row["derivative_" + name + "_jax_ms"] = v["jax_ms"];
    row["derivative_" + name + "_largest_difference"] = v["largest_difference"];
  }
  // Indexed updates, gathers and order statistics beside JAX, likewise, with bit-for-bit
  // equality of the values.
  const auto [index_ratios, index_last] = ratios_over_rounds("indexing", o);
  for (const auto& [name, r] : index_ratios) {
    const nlohmann::json& v = index_last[name];
    row["indexing_" + name + "_spmd_over_jax"] = median(r);
    row["indexing_" + name + "_spmd_ms"] = v["spmd_ms"];
    row["indexing_" + name + "_jax_ms"] = v["jax_ms"];
    row["indexing_" + name + "_bit_for_bit"] = v["bit_for_bit"];
  }
  // Special functions (XLA's compositions) and a debug callback's call beside JAX, likewise.
  const auto [special_ratios, special_last] = ratios_over_rounds("special", o);
  for (const auto& [name, r] : special_ratios) {
    const nlohmann::json& v = special_last[name];
    row["special_" + name + "_spmd_over_jax"] = median(r);
    row["special_" + name + "_spmd_ms"] = v["spmd_ms"];
    row["special_" + name + "_jax_ms"] = v["jax_ms"];
    row["special_" + name + "_bit_for_bit"] = v["bit_for_bit"];
  }
  if (!o.json) fmt::print("the spmd Python package beside JAX and beside C++:\n");
  fmt::print("{}\n", row.dump());
  return 0;
}

}  // namespace spmd::bench
