#include "spmd-bench/reshard_bench.h"

#include <fmt/format.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/subprocess.h"
#include "spmd-bench/jax_baseline.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// value(r, c) at every element: (r * 7 + c) % 1000.
float pattern(int64_t r, int64_t c) { return static_cast<float>((r * 7 + c) % 1000); }

Array patterned(const Shape& shape, const NamedSharding& sharding) {
  return make_array_from_callback(shape, sharding, [&](const Index& index) {
    HostArray h = HostArray::zeros(DType::kFloat32, index_extents(index));
    auto v = h.mutable_data<float>();
    const int64_t w = index[1].stop - index[1].start;
    for (int64_t r = index[0].start; r < index[0].stop; ++r) {
      for (int64_t c = 0; c < w; ++c)
        v[(r - index[0].start) * w + c] = pattern(r, index[1].start + c);
    }
    return h;
  });
}

// Samples the first shard of `b` (split by columns) against pattern().
bool holds_pattern(const Array& b, int64_t rows) {
  const Shard& s = b.addressable_shards().front();
  const auto v = s.data.data<float>();
  const int64_t w = s.index[1].stop - s.index[1].start;
  bool correct = true;
  for (int64_t r = 0; r < rows && correct; r += 97) {
    for (int64_t c = 0; c < w; c += 13) correct &= v[r * w + c] == pattern(r, s.index[1].start + c);
  }
  return correct;
}

void print_reshard_row(size_t bytes, const std::vector<double>& reshard,
                       const std::vector<double>& a2a, const std::vector<double>& a2a_fresh,
                       bool correct) {
  nlohmann::ordered_json row;
  row["bytes"] = bytes;
  row["processes"] = process_count();
  row["reshard_s"] = median(reshard);
  row["all_to_all_s"] = median(a2a);
  row["ratio"] = median(reshard) / median(a2a);
  row["all_to_all_fresh_output_s"] = median(a2a_fresh);
  row["ratio_fresh"] = median(reshard) / median(a2a_fresh);
  row["correct"] = correct;
  print_row(row);
}

int run_reshard_worker(const ReshardBenchOptions& o) {
  distributed::initialize();
  const int n = process_count();
  // A square-ish float32 array of `bytes`, both dimensions divisible by n.
  int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(o.bytes) / 4.0));
  side -= side % n;
  const Shape shape = {side, side};
  const Mesh mesh(devices(), {"x"});
  const NamedSharding rows(mesh, P("x", None));
  const NamedSharding cols(mesh, P(None, "x"));
  const Array a = patterned(shape, rows);
  Communicator world = spmd::world();
  const size_t shard_elems = static_cast<size_t>(side * side / n);
  std::vector<float> in(shard_elems, 1.0f);
  std::vector<float> out(shard_elems);

  std::vector<double> reshard;
  std::vector<double> a2a;
  std::vector<double> a2a_fresh;
  bool correct = true;
  for (int i = 0; i <= o.iterations; ++i) {
    world.barrier();
    auto t0 = Clock::now();
    const Array b = device_put(a, cols);
    const double t_reshard = std::chrono::duration<double>(Clock::now() - t0).count();
    world.barrier();
    t0 = Clock::now();
    world.all_to_all(DType::kFloat32, in.data(), out.data(), shard_elems / n);
    const double t_a2a = std::chrono::duration<double>(Clock::now() - t0).count();
    // Like device_put, which must give its result new memory: an output allocated per call.
    world.barrier();
    t0 = Clock::now();
    {
      HostArray fresh =
          HostArray::uninitialized(DType::kFloat32, {static_cast<int64_t>(shard_elems)});
      world.all_to_all(DType::kFloat32, in.data(), fresh.mutable_bytes().data(), shard_elems / n);
    }
    const double t_a2a_fresh = std::chrono::duration<double>(Clock::now() - t0).count();
    if (i == 0) {  // warm-up; and the check
      correct = holds_pattern(b, side);
      continue;
    }
    reshard.push_back(t_reshard);
    a2a.push_back(t_a2a);
    a2a_fresh.push_back(t_a2a_fresh);
  }
  if (process_index() == 0) {
    print_reshard_row(static_cast<size_t>(side * side * 4), reshard, a2a, a2a_fresh, correct);
  }
  distributed::shutdown();
  return correct ? 0 : 1;
}

int run_reshard_bench(const ReshardBenchOptions& o) {
  const std::vector<std::string> worker = {"reshard-worker", "--bytes", std::to_string(o.bytes),
                                           "--iterations", std::to_string(o.iterations)};
  if (o.impls == "spmd") {
    return run_spmd_job(
        o.processes, worker,
        "reshard P(\"x\", None) -> P(None, \"x\") beside all_to_all of the same bytes:", o.json);
  }
  return run_beside_jax(
      "reshard P(\"x\", None) -> P(None, \"x\") beside all_to_all and beside JAX's device_put",
      o.processes, worker, "reshard", {std::to_string(o.bytes), std::to_string(o.iterations)},
      o.rounds, o.json, {{"reshard_time_vs_jax", "reshard_s", "reshard_s", false}},
      [](nlohmann::ordered_json& row) {
        if (row["jax"].is_object()) row["correct"] = row["correct"] && row["jax"]["correct"];
      });
}

}  // namespace spmd::bench
