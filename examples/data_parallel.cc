// Data-parallel training two ways (examples/python/data_parallel.py in C++): 20 SGD steps of a
// linear model, its parameters replicated and its batch split over every device of every process.
//
//   spmdrun -n 2 --cpu-devices 2 -- build/examples/data_parallel
//
// 1. jit with shardings: the loss is the mean over the global batch; the partitioner reduces the
//    gradient across devices.
// 2. lax::shard_map: each device takes the gradient of its own block's mean loss, then pmean over
//    "data" (the usual hand-written step).
// Under shard_map's default check_vma, the gradient of a replicated parameter taken inside the
// map is already summed over "data" (JAX's types: the transpose of its implicit broadcast is a
// psum), and pmean of that sum is the sum: n times the global mean gradient for n devices. So the
// shard_map step with learning rate lr / n follows the jit step with lr. Every process checks that
// the losses agree at every step and the parameters at the end (exit 1 otherwise).
#include <spmd/spmd.h>

#include <cmath>
#include <cstdio>

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::NamedSharding;
using spmd::P;
using spmd::Tensor;

namespace {

constexpr float kLr = 0.1f;

// Seeded rows, the same in every process (the array is global): y = x · [1, -2, 0.5, 3].
Array rows(const spmd::Mesh& mesh, int64_t count, bool targets) {
  const spmd::Shape shape{count, targets ? 1 : 4};
  return spmd::make_array_from_callback(
      shape, NamedSharding(mesh, P("data")), [&](const spmd::Index& index) {
        const int64_t n = index[0].stop - index[0].start;
        spmd::HostArray h = spmd::HostArray::zeros(spmd::DType::kFloat32, {n, shape[1]});
        auto v = h.mutable_data<float>();
        const float w[4] = {1.0f, -2.0f, 0.5f, 3.0f};
        for (int64_t r = 0; r < n; ++r) {
          float y = 0;
          for (int c = 0; c < 4; ++c) {
            const float x = std::sin(static_cast<float>((index[0].start + r) * 4 + c) * 0.37f);
            y += x * w[c];
            if (!targets) v[static_cast<size_t>(r * 4 + c)] = x;
          }
          if (targets) v[static_cast<size_t>(r)] = y;
        }
        return h;
      });
}

Tensor loss_fn(const Tensor& w, const Tensor& x, const Tensor& y) {
  const Tensor d = jnp::matmul(x, w) - y;
  return jnp::mean(d * d);
}

float value(const Array& a) { return spmd::multihost::process_allgather(a).data<float>()[0]; }

}  // namespace

int main() {
  spmd::distributed::initialize();
  const auto n = static_cast<int64_t>(spmd::device_count());
  const spmd::Mesh mesh(spmd::devices(), {n}, {"data"});
  const Array x = rows(mesh, 8 * n, false), y = rows(mesh, 8 * n, true);
  const Array w0 = spmd::device_put(spmd::HostArray::zeros(spmd::DType::kFloat32, {4, 1}),
                                    NamedSharding(mesh, P()));

  auto jit_step = spmd::jit([](const Tensor& w, const Tensor& x, const Tensor& y) {
    auto [loss, g] = spmd::value_and_grad(loss_fn)(w, x, y);
    return std::vector<Tensor>{w - kLr * g, loss};
  });
  auto map_step = spmd::jit([&](const Tensor& w, const Tensor& x, const Tensor& y) {
    return spmd::lax::shard_map(
        [&](const Tensor& wb, const Tensor& xb, const Tensor& yb) {
          auto [loss, g] = spmd::value_and_grad(loss_fn)(wb, xb, yb);
          // Already summed over "data" by autodiff: pmean keeps the sum.
          const Tensor summed = spmd::lax::pmean(g, "data");
          return std::vector<Tensor>{wb - (kLr / static_cast<float>(n)) * summed,
                                     spmd::lax::pmean(loss, "data")};
        },
        mesh, {P(), P("data"), P("data")}, {P(), P()})(w, x, y);
  });

  Array w_jit = w0, w_map = w0;
  float loss_jit = 0, loss_map = 0;
  for (int step = 0; step < 20; ++step) {
    const auto a = jit_step(w_jit, x, y);
    const auto b = map_step(w_map, x, y);
    w_jit = a[0];
    w_map = b[0];
    loss_jit = value(a[1]);
    loss_map = value(b[1]);
    if (std::fabs(loss_jit - loss_map) > 1e-5f * std::fmax(1.0f, std::fabs(loss_jit))) {
      std::printf("step %d: jit loss %g, shard_map loss %g: DIFFERENT\n", step, loss_jit, loss_map);
      return 1;
    }
  }
  const spmd::HostArray a = spmd::multihost::process_allgather(w_jit);
  const spmd::HostArray b = spmd::multihost::process_allgather(w_map);
  for (size_t i = 0; i < a.data<float>().size(); ++i) {
    if (std::fabs(a.data<float>()[i] - b.data<float>()[i]) > 1e-5f) {
      std::printf("final parameters differ at %zu: DIFFERENT\n", i);
      return 1;
    }
  }
  std::printf(
      "20 steps: jit loss %.6f, shard_map loss %.6f (learning rate %g and %g/%lld): the "
      "same trajectory\n",
      loss_jit, loss_map, kLr, kLr, static_cast<long long>(n));
  spmd::distributed::shutdown();
  return 0;
}
