#include "spmd-bench/jit_bench.h"

#include <cblas.h>
#include <fmt/format.h>
#include <spmd/spmd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "spmd-bench/jax_baseline.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

namespace jnp = spmd::numpy;
using Clock = std::chrono::steady_clock;

Array filled(const Shape& shape, const Sharding& sharding, float value) {
  return make_array_from_callback(shape, sharding, [&](const Index& index) {
    HostArray h = HostArray::uninitialized(DType::kFloat32, index_extents(index));
    for (float& v : h.mutable_data<float>()) v = value;
    return h;
  });
}

NamedSharding alone() {
  static const Mesh mesh({local_devices()[0]}, {"one"});
  return NamedSharding(mesh, P());
}

// Per call, over batches of 1000 calls.
void dispatch(nlohmann::ordered_json& row, int iterations) {
  const Array x = filled({16}, alone(), 1.0f);
  auto add_one = jit([](const Tensor& t) { return t + 1.0f; });
  const double jit_s = timed(iterations,
                             [&] {
                               for (int i = 0; i < 1000; ++i) add_one(x);
                             }) /
                       1000;
  const HostArray h = x.addressable_data(0);
  const float one = 1.0f;
  const double direct_s =
      timed(iterations,
            [&] {
              for (int i = 0; i < 1000; ++i) {
                HostArray out = HostArray::uninitialized(DType::kFloat32, {16});
                kernels::binary(kernels::Binary::kAdd, DType::kFloat32, {h.bytes().data(), 16},
                                {reinterpret_cast<const std::byte*>(&one), 1},
                                out.mutable_bytes().data(), 16);
              }
            }) /
      1000;
  row["dispatch_us"] = jit_s * 1e6;
  row["direct_kernel_us"] = direct_s * 1e6;
  row["dispatch_within_2x_plus_10us"] = jit_s <= 2 * direct_s + 10e-6;
}

void contraction(nlohmann::ordered_json& row, int iterations) {
  const int64_t n = 2048;
  const Mesh mesh(devices(), {"x"});
  const Array x = filled({n, n}, NamedSharding(mesh, P("x")), 0.5f);
  const Array w = filled({n, n}, NamedSharding(mesh, P()), 0.25f);
  auto mm = jit([](const Tensor& a, const Tensor& b) { return jnp::matmul(a, b); });
  const double jit_s = timed(iterations, [&] { mm(x, w); });
  const HostArray& a = x.addressable_data(0);
  const HostArray& b = w.addressable_data(0);
  const int m = static_cast<int>(a.shape()[0]);
  const double blas_s = timed(iterations, [&] {
    HostArray c = HostArray::uninitialized(DType::kFloat32, {m, n});
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, n, 1.0f, a.data<float>().data(), n,
                b.data<float>().data(), n, 0.0f, c.mutable_data<float>().data(), n);
  });
  row["matmul_jit_s"] = jit_s;
  row["matmul_blas_s"] = blas_s;
  row["matmul_speed_vs_blas"] = blas_s / jit_s;
}

void fusion(nlohmann::ordered_json& row, int iterations) {
  const int64_t n = int64_t{16} << 20;
  const Array a = filled({n}, alone(), 1.5f), b = filled({n}, alone(), 2.0f),
              c = filled({n}, alone(), 0.5f);
  auto fma = jit([](const Tensor& p, const Tensor& q, const Tensor& r) { return p * q + r; });
  const float* pa = a.addressable_data(0).data<float>().data();
  const float* pb = b.addressable_data(0).data<float>().data();
  const float* pc = c.addressable_data(0).data<float>().data();
  const auto [jit_s, loop_s] = timed_side_by_side(
      iterations, [&] { fma(a, b, c); },
      [&] {
        HostArray out = HostArray::uninitialized(DType::kFloat32, {n});
        float* o = out.mutable_data<float>().data();
        for (int64_t i = 0; i < n; ++i) o[i] = pa[i] * pb[i] + pc[i];
      });
  row["fusion_jit_s"] = jit_s;
  row["fusion_loop_s"] = loop_s;
  row["fusion_speed_vs_loop"] = loop_s / jit_s;
}

// h[i, j] = max(h[i, j] + b[j], 0) (relu) or h[i, j] + b[j], in place: the baseline's own loop.
void add_bias(Block& h, const Block& b, bool relu) {
  auto v = h.mutable_data<float>();
  const auto bias = b.data<float>();
  const size_t cols = bias.size();
  for (size_t i = 0; i < v.size(); ++i) {
    const float x = v[i] + bias[i % cols];
    v[i] = relu && x < 0 ? 0.0f : x;
  }
}

struct MlpLayout {
  const char* name;
  std::vector<int64_t> mesh_shape;   // (dp, mp)
  std::vector<PartitionSpec> specs;  // x, w1, b1, w2, b2
  bool reduce;                       // the second product's partial sums cross mp
};

// One MLP layout: jit beside shard_map with the named collectives, same inputs.
void mlp(nlohmann::ordered_json& row, int iterations, const MlpLayout& l) {
  const int64_t batch = 512, in = 512, hidden = 2048, out = 512;
  const Mesh mesh(devices(), l.mesh_shape, {"dp", "mp"});
  const std::vector<Shape> shapes = {{batch, in}, {in, hidden}, {hidden}, {hidden, out}, {out}};
  std::vector<Array> a;
  for (size_t i = 0; i < shapes.size(); ++i) {
    a.push_back(
        filled(shapes[i], NamedSharding(mesh, l.specs[i]), 0.01f * static_cast<float>(i + 1)));
  }
  auto forward = jit(
      [](const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
        return jnp::matmul(jnp::relu(jnp::matmul(x, w1) + b1), w2) + b2;
      });
  const bool reduce = l.reduce;
  auto by_hand = shard_map(
      [reduce](const Block& x, const Block& w1, const Block& b1, const Block& w2, const Block& b2) {
        Block h = matmul(x, w1);
        add_bias(h, b1, true);
        Block y = matmul(h, w2);
        if (reduce) y = psum(y, "mp");
        add_bias(y, b2, false);
        return y;
      },
      mesh, l.specs, P("dp"));
  const double jit_s = timed(iterations, [&] { forward(a[0], a[1], a[2], a[3], a[4]); });
  const double sm_s = timed(iterations, [&] { by_hand(a[0], a[1], a[2], a[3], a[4]); });
  const bool same = multihost::process_allgather(forward(a[0], a[1], a[2], a[3], a[4])) ==
                    multihost::process_allgather(by_hand(a[0], a[1], a[2], a[3], a[4]));
  row[fmt::format("mlp_{}_jit_s", l.name)] = jit_s;
  row[fmt::format("mlp_{}_shard_map_s", l.name)] = sm_s;
  row[fmt::format("mlp_{}_jit_vs_shard_map", l.name)] = jit_s / sm_s;
  row[fmt::format("mlp_{}_same_result", l.name)] = same;
}

// The data-parallel step written with lax::shard_map inside jit (replicated w, the batch split
// over every device, grad inside, pmean, the update): a fresh jit's first call (trace, and the
// compiled program found in the process's cache) and a cached call. With check_vma (`key`
// "shard_map_step") the gradient is summed over "dp" (JAX's types): one more all-reduce than the
// unchecked step ("shard_map_step_unchecked"), whose program is the one before issue 50.
void shard_map_step(nlohmann::ordered_json& row, int iterations, bool check_vma,
                    const std::string& key) {
  const Mesh mesh(devices(), {static_cast<int64_t>(devices().size())}, {"dp"});
  const int64_t rows = 16 * static_cast<int64_t>(devices().size());
  const Array w = filled({16, 4}, NamedSharding(mesh, P()), 0.5f);
  const Array x = filled({rows, 16}, NamedSharding(mesh, P("dp")), 0.25f);
  const Array y = filled({rows, 4}, NamedSharding(mesh, P("dp")), 1.0f);
  auto body = [](const Tensor& wb, const Tensor& xb, const Tensor& yb) {
    auto loss = [](const Tensor& v, const Tensor& a, const Tensor& b) {
      const Tensor d = jnp::matmul(a, v) - b;
      return jnp::mean(d * d);
    };
    return wb - 0.1f * lax::pmean(grad(loss)(wb, xb, yb), "dp");
  };
  auto make = [&] {
    return jit([&](const Tensor& a, const Tensor& b, const Tensor& c) {
      return lax::shard_map(body, mesh, {P(), P("dp"), P("dp")}, P(), {.check_vma = check_vma})(
          a, b, c);
    });
  };
  const double first_s = timed(iterations,
                               [&] {
                                 for (int i = 0; i < 20; ++i) make()(w, x, y);
                               }) /
                         20;
  auto step = make();
  step(w, x, y);
  const double cached_s = timed(iterations,
                                [&] {
                                  for (int i = 0; i < 200; ++i) step(w, x, y);
                                }) /
                          200;
  row[key + "_first_call_ms"] = first_s * 1e3;
  row[key + "_cached_us"] = cached_s * 1e6;
}

}  // namespace

int run_jit_worker(const JitBenchOptions& o) {
  distributed::initialize();
  nlohmann::ordered_json row;
  row["processes"] = process_count();
  dispatch(row, o.iterations);
  shard_map_step(row, o.iterations, true, "shard_map_step");
  shard_map_step(row, o.iterations, false, "shard_map_step_unchecked");
  contraction(row, o.iterations);
  fusion(row, o.iterations);
  const int n = process_count();
  mlp(row, o.iterations, {"data_parallel", {n, 1}, {P("dp"), P(), P(), P(), P()}, false});
  mlp(row, o.iterations,
      {"megatron", {1, n}, {P(), P(None, "mp"), P("mp"), P("mp", None), P()}, true});
  row["correct"] = row["mlp_data_parallel_same_result"].get<bool>() &&
                   row["mlp_megatron_same_result"].get<bool>();
  print_row(row);
  distributed::shutdown();
  return 0;
}

int run_jit_bench(const JitBenchOptions& o) {
  const std::vector<std::string> worker = {"jit-worker", "--iterations",
                                           std::to_string(o.iterations)};
  if (o.impls == "spmd") {
    return run_spmd_job(o.processes, worker, "spmd::jit beside the same work without it:", o.json);
  }
  return run_beside_jax(
      "spmd::jit beside JAX's jit", o.processes, worker, "jit", {std::to_string(o.iterations)},
      o.rounds, o.json,
      {{"dispatch_time_vs_jax", "dispatch_us", "dispatch_us", false},
       {"matmul_speed_vs_jax", "matmul_jit_s", "matmul_s", true},
       {"fusion_speed_vs_jax", "fusion_jit_s", "fusion_s", true},
       {"mlp_data_parallel_speed_vs_jax", "mlp_data_parallel_jit_s", "mlp_data_parallel_s", true},
       {"mlp_megatron_speed_vs_jax", "mlp_megatron_jit_s", "mlp_megatron_s", true}});
}

}  // namespace spmd::bench
