// What the device tests share (device_memory_test, gpu_runtime_test): deterministic inputs, and
// seed 002's step — value_and_grad of a two-layer MLP's mean squared loss and an SGD update under
// jit — run for a number of steps over parameter and batch layouts the caller picks.
#pragma once

#include <spmd/spmd.h>

#include <array>
#include <cmath>
#include <vector>

namespace spmd::testing {

// float32 sin(0.37 i + phase) in row-major order: values that differ everywhere.
inline HostArray wave(const Shape& shape, double phase) {
  std::vector<float> v(static_cast<size_t>(shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + phase));
  }
  return HostArray::from_vector(v, shape);
}

struct SgdRun {
  std::vector<Array> last;    // the last step's w1, b1, w2, b2 and loss
  std::vector<float> losses;  // each step's loss
};

// `steps` steps of x (rows × in) → tanh hidden → out, learning rate 0.1, from wave() values:
// the parameters laid out as `params` (w1, b1, w2, b2), x and y as `batch`.
inline SgdRun sgd_steps(const Mesh& mesh, const std::array<PartitionSpec, 4>& params,
                        const PartitionSpec& batch, int64_t rows, int64_t in, int64_t hidden,
                        int64_t out, int steps) {
  namespace jnp = spmd::numpy;
  const std::array<Shape, 4> shapes{Shape{in, hidden}, Shape{hidden}, Shape{hidden, out},
                                    Shape{out}};
  std::vector<Array> p;
  for (size_t k = 0; k < 4; ++k) {
    p.push_back(device_put(wave(shapes[k], 0.2 + 0.1 * double(k)), NamedSharding(mesh, params[k])));
  }
  const Array x = device_put(wave({rows, in}, 0.6), NamedSharding(mesh, batch));
  const Array y = device_put(wave({rows, out}, 0.8), NamedSharding(mesh, batch));
  auto loss = [](const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                 const Tensor& xb, const Tensor& yb) {
    const Tensor h = jnp::tanh(jnp::matmul(xb, w1) + b1);
    return jnp::mean(jnp::power(jnp::matmul(h, w2) + b2 - yb, 2));
  };
  auto step = jit([&](const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                      const Tensor& xb, const Tensor& yb) {
    auto [value, g] = value_and_grad<0, 1, 2, 3>(loss)(w1, b1, w2, b2, xb, yb);
    return std::vector<Tensor>{w1 - 0.1f * std::get<0>(g), b1 - 0.1f * std::get<1>(g),
                               w2 - 0.1f * std::get<2>(g), b2 - 0.1f * std::get<3>(g), value};
  });
  SgdRun run;
  for (int s = 0; s < steps; ++s) {
    run.last = step(p[0], p[1], p[2], p[3], x, y);
    p.assign(run.last.begin(), run.last.begin() + 4);
    run.losses.push_back(run.last[4].to_host().data<float>()[0]);
  }
  return run;
}

}  // namespace spmd::testing
