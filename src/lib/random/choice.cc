// spmd::random::choice (jax.random.choice): from arange(n) or from an array's slices along an
// axis, with or without replacement, uniformly or with probabilities `p`, as JAX's core.py builds
// it: randint or permutation without `p`; with `p`, the running sum of `p` searched at uniform
// draws (with replacement) or the top draws of gumbel noise plus log(p) (without).
#include <fmt/format.h>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/error.h"
#include "spmd/numpy.h"
#include "spmd/numpy_eager.h"
#include "spmd/random.h"

namespace spmd::random {
namespace {

void check_draws(const Shape& shape, int64_t n, bool replace) {
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(fmt::format("random.choice: shape ({}) has a negative dimension",
                                        fmt::join(shape, ", ")));
    }
  }
  if (n <= 0 && shape_size(shape) > 0) {
    throw InvalidArgument(fmt::format(
        "random.choice: a must be greater than 0 unless no samples are taken, not {}", n));
  }
  if (!replace && shape_size(shape) > n) {
    throw InvalidArgument(fmt::format(
        "random.choice: cannot take a larger sample (size {}) than the population (size {}) "
        "when replace=false",
        shape_size(shape), n));
  }
}

// Indices into n entries drawn with probabilities `p` (JAX's `p` branch), of `shape`.
Tensor weighted(const Tensor& key, int64_t n, const Shape& shape, bool replace, const Tensor& p) {
  compiler::trace_of("random.choice", {&key, &p});
  if (p.shape() != Shape{n}) {
    throw InvalidArgument(
        fmt::format("random.choice: p must be a rank-1 array of the population's size {}, not {}",
                    n, compiler::type_text(p.dtype(), p.shape())));
  }
  // promote_dtypes_inexact: integer and bool weights become float32.
  const DType dtype = is_floating(p.dtype()) ? p.dtype() : DType::kFloat32;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    throw InvalidArgument(
        fmt::format("random.choice: p of {} (float32 or float64 only)", dtype_name(dtype)));
  }
  const Tensor weights = compiler::lax::convert_element_type(p, dtype);
  if (!replace) {
    // The Gumbel top-k trick.
    const Tensor g = gumbel(key, {n}, dtype) + numpy::log(weights);
    const Tensor top = compiler::lax::top_k(g, shape_size(shape));
    return numpy::reshape(top, shape);
  }
  const Tensor running = compiler::lax::cumsum(weights, 0);
  const Tensor total = numpy::reshape(numpy::slice(running, {n - 1}, {n}), {});
  const Tensor r = total * (1.0 - uniform(key, shape, dtype));
  return compiler::lax::search_sorted(running, r);
}

int normalized_axis(const Tensor& a, int axis) {
  if (a.ndim() == 0) {
    throw InvalidArgument(
        "random.choice: a must be an array of rank 1 or more (give the population's size as an "
        "integer for arange(n))");
  }
  return numpy::internal::normalize_axis("random.choice", axis, a.shape());
}

}  // namespace

Tensor choice(const Tensor& key, int64_t n, const Shape& shape, bool replace) {
  check_draws(shape, n, replace);
  const int64_t draws = shape_size(shape);
  if (draws == 0) return numpy::zeros(shape, DType::kInt32);
  if (replace) return randint(key, shape, 0, n);
  return numpy::reshape(numpy::slice(permutation(key, n), {0}, {draws}), shape);
}

Tensor choice(const Tensor& key, int64_t n, const Shape& shape, bool replace, const Tensor& p) {
  check_draws(shape, n, replace);
  if (shape_size(shape) == 0) return numpy::zeros(shape, DType::kInt32);
  return weighted(key, n, shape, replace, p);
}

Tensor choice(const Tensor& key, const Tensor& a, const Shape& shape, bool replace,
              const std::optional<Tensor>& p, int axis) {
  compiler::trace_of("random.choice", {&key, &a});
  const int ax = normalized_axis(a, axis);
  const Shape in = a.shape();
  const int64_t n = in[static_cast<size_t>(ax)];
  check_draws(shape, n, replace);
  const int64_t draws = shape_size(shape);
  if (draws == 0) return numpy::zeros(shape, a.dtype());
  Shape out(in.begin(), in.begin() + ax);
  out.insert(out.end(), shape.begin(), shape.end());
  out.insert(out.end(), in.begin() + ax + 1, in.end());
  if (!p && !replace) {
    std::vector<int64_t> start(in.size(), 0);
    std::vector<int64_t> stop(in.begin(), in.end());
    stop[static_cast<size_t>(ax)] = draws;
    return numpy::reshape(numpy::slice(permutation(key, a, ax), start, stop), out);
  }
  const Tensor indices = p ? weighted(key, n, shape, replace, *p) : randint(key, shape, 0, n);
  return compiler::lax::take(a, indices, ax);
}

Array choice(const Array& key, int64_t n, const Shape& shape, bool replace) {
  return numpy::detail::eager(
      fmt::format("random.choice[{}][{}]{}", n, fmt::join(shape, ","), replace), {&key},
      [=](const std::vector<Tensor>& t) { return choice(t[0], n, shape, replace); });
}

Array choice(const Array& key, int64_t n, const Shape& shape, bool replace, const Array& p) {
  return numpy::detail::eager(
      fmt::format("random.choice[{}][{}]{}p", n, fmt::join(shape, ","), replace), {&key, &p},
      [=](const std::vector<Tensor>& t) { return choice(t[0], n, shape, replace, t[1]); });
}

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             const std::optional<Array>& p, int axis) {
  const std::string name = fmt::format("random.choice[a][{}]{}{}axis={}", fmt::join(shape, ","),
                                       replace, p ? "p" : "", axis);
  if (!p) {
    return numpy::detail::eager(name, {&key, &a}, [=](const std::vector<Tensor>& t) {
      return choice(t[0], t[1], shape, replace, std::nullopt, axis);
    });
  }
  return numpy::detail::eager(name, {&key, &a, &*p}, [=](const std::vector<Tensor>& t) {
    return choice(t[0], t[1], shape, replace, t[2], axis);
  });
}

}  // namespace spmd::random
