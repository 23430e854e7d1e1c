#include "spmd-bench/random_bench.h"

#include <fmt/format.h>
#include <spmd/spmd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

// jit(normal(key, {n})) with its result split over every device of the job.
auto sharded_normal(int64_t n, const Mesh& mesh) {
  return jit([n](const Tensor& k) { return random::normal(k, {n}); },
             {.out_shardings = {NamedSharding(mesh, P("x"))}});
}

void sharded(nlohmann::ordered_json& row, const RandomBenchOptions& o) {
  const Mesh all(devices(), {"x"});
  const Mesh one({local_devices()[0]}, {"x"});
  const Array key_all = device_put(random::PRNGKey(42), NamedSharding(all, P()));
  const Array key_one = device_put(random::PRNGKey(42), NamedSharding(one, P()));
  auto whole = sharded_normal(o.elements, all);
  auto share = sharded_normal(o.elements / process_count(), one);
  whole(key_all);
  share(key_one);
  std::vector<double> split_s, alone_s;
  for (int i = 0; i < o.iterations; ++i) {
    split_s.push_back(timed_phase(fmt::format("random/split/{}", i), [&] { whole(key_all); }));
    alone_s.push_back(timed_phase(fmt::format("random/alone/{}", i), [&] {
      if (process_index() == 0) share(key_one);
    }));
  }
  row["elements"] = o.elements;
  row["sharded_s"] = median(split_s);
  row["one_process_its_share_alone_s"] = median(alone_s);
  row["sharded_over_alone"] = median(split_s) / median(alone_s);
  row["correct"] = true;
}

// Seconds per call of spmd's single-device normals, in a fresh one-process job.
double spmd_single_round(const RandomBenchOptions& o) {
  const auto rows =
      spmd_job_rows(1, {"random-worker", "--mode", "single", "--elements",
                        std::to_string(o.elements), "--iterations", std::to_string(o.iterations)});
  if (rows.empty()) return -1;
  return nlohmann::json::parse(rows.front()).value("single_s", -1.0);
}

// Seconds per call of JAX's, in a fresh Python process; -1 when JAX cannot run.
double jax_single_round(const RandomBenchOptions& o, std::string& version) {
  const std::string script = (self_dir() / "jax_random_worker.py").string();
  const auto rows = run_workers(
      {{bench_python(), script, std::to_string(o.elements), std::to_string(o.iterations)}},
      {{{"JAX_PLATFORMS", "cpu"}}});
  if (rows.empty()) return -1;
  const auto row = nlohmann::json::parse(rows.front());
  version = row.value("jax", "");
  return row.value("seconds", -1.0);
}

}  // namespace

int run_random_worker(const RandomBenchOptions& o) {
  distributed::initialize();
  nlohmann::ordered_json row;
  row["processes"] = process_count();
  if (o.mode == "single") {
    const Mesh one({local_devices()[0]}, {"x"});
    const Array key = device_put(random::PRNGKey(42), NamedSharding(one, P()));
    auto normal = sharded_normal(o.elements, one);
    row["single_s"] = timed(o.iterations, [&] { normal(key); });
  } else {
    sharded(row, o);
  }
  print_row(row);
  distributed::shutdown();
  return 0;
}

int run_random_bench(const RandomBenchOptions& o) {
  const auto rows = spmd_job_rows(
      o.processes, {"random-worker", "--mode", "sharded", "--elements", std::to_string(o.elements),
                    "--iterations", std::to_string(o.iterations)});
  if (rows.empty()) return 1;
  auto row = nlohmann::ordered_json::parse(rows.front());
  // Interleaved rounds on one device: spmd, then JAX, each in a fresh process.
  std::vector<double> ratios, spmd_s, jax_s;
  std::string version;
  for (int r = 0; r < o.rounds; ++r) {
    const double s = spmd_single_round(o);
    const double j = jax_single_round(o, version);
    if (s <= 0 || j <= 0) break;
    spmd_s.push_back(s);
    jax_s.push_back(j);
    ratios.push_back(j / s);
  }
  if (ratios.empty()) {
    row["jax"] = "not run: JAX did not start (is the build's venv there? `make venv`)";
  } else {
    row["jax"] = version;
    row["single_device_spmd_s"] = median(spmd_s);
    row["single_device_jax_s"] = median(jax_s);
    row["speed_vs_jax_median_round"] = median(ratios);
    row["speed_vs_jax_rounds"] = ratios;
  }
  if (!o.json) fmt::print("spmd::random.normal beside its baselines:\n");
  fmt::print("{}\n", row.dump());
  return row.value("correct", false) ? 0 : 1;
}

}  // namespace spmd::bench
