// spmd::random's front end (random.h): checks the user's arguments, then the random family's
// operations (ops/random.h), composed with spmd::numpy where JAX composes its samplers
// (bernoulli, categorical, choice); the functions on Arrays run through spmd::numpy's eager jits.
#include "spmd/random.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "lib/random/ops.h"
#include "spmd/error.h"
#include "spmd/numpy.h"
#include "spmd/numpy_eager.h"
#include "spmd/runtime.h"
#include "spmd/sharding.h"

namespace spmd::random {
namespace {

using compiler::make_operation;
using compiler::RandomBitsOp;
using compiler::RandomPermutationOp;
using compiler::RandomSampleOp;
using kernels::Distribution;
using kernels::RandomBits;
using kernels::Sampler;

void check_key(std::string_view what, const Tensor& key) {
  compiler::trace_of(what, {&key});
  if (key.dtype() != DType::kUInt32 || key.shape() != Shape{2}) {
    throw InvalidArgument(fmt::format(
        "random.{}: the key must be one raw key, uint32[2] (as PRNGKey makes it), not {}", what,
        compiler::type_text(key.dtype(), key.shape())));
  }
}

Tensor random_bits(const Tensor& key, RandomBits kind, const Shape& shape) {
  return compiler::lax::bind(make_operation<RandomBitsOp>(kind, shape), {key});
}

void check_shape(std::string_view what, const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(fmt::format("random.{}: shape ({}) has a negative dimension", what,
                                        fmt::join(shape, ", ")));
    }
  }
}

// A sampler's values of `shape`, after checking the key, the shape and the dtype.
Tensor sample(std::string_view what, const Tensor& key, const Sampler& sampler,
              const Shape& shape) {
  check_key(what, key);
  check_shape(what, shape);
  if (!kernels::supported(sampler)) {
    throw InvalidArgument(fmt::format(
        "random.{}: dtype {} is not one spmd samples ({})", what, dtype_name(sampler.dtype),
        sampler.distribution == Distribution::kUniform           ? "float32 or float64"
        : sampler.distribution == Distribution::kRandint         ? "an integer type"
        : sampler.distribution == Distribution::kTruncatedNormal ? "float32, JAX's default"
                                                                 : "float32, float16 or bfloat16"));
  }
  return compiler::lax::bind(make_operation<RandomSampleOp>(sampler, shape), {key});
}

// The closed range of an integer dtype.
std::pair<int64_t, int64_t> int_range(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return {INT8_MIN, INT8_MAX};
    case DType::kInt16:
      return {INT16_MIN, INT16_MAX};
    case DType::kInt32:
      return {INT32_MIN, INT32_MAX};
    case DType::kUInt8:
      return {0, UINT8_MAX};
    case DType::kUInt16:
      return {0, UINT16_MAX};
    case DType::kUInt32:
      return {0, UINT32_MAX};
    case DType::kUInt64:
      return {0, INT64_MAX};  // the bounds are int64
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

std::string shape_key(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

// `fn` on `key` through an eager jit named `name` (one per name).
Array eager(const std::string& name, const Array& key, std::function<Tensor(const Tensor&)> fn) {
  return numpy::detail::eager(
      name, {&key}, [fn = std::move(fn)](const std::vector<Tensor>& t) { return fn(t[0]); });
}

}  // namespace

Array PRNGKey(int64_t seed) {
  const bool fits_int32 =
      seed >= std::numeric_limits<int32_t>::min() && seed <= std::numeric_limits<int32_t>::max();
  const auto hi = fits_int32 ? 0u : static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32);
  const auto lo = static_cast<uint32_t>(static_cast<uint64_t>(seed));
  const HostArray key = HostArray::from_vector(std::vector<uint32_t>{hi, lo}, {2});
  return device_put(key, SingleDeviceSharding(local_devices().front()));
}

Tensor split(const Tensor& key, int64_t num) {
  check_key("split", key);
  if (num < 0) throw InvalidArgument(fmt::format("random.split: num must be >= 0, not {}", num));
  return random_bits(key, RandomBits::kKeys, {num});
}

Array split(const Array& key, int64_t num) {
  return eager(fmt::format("random.split[{}]", num), key,
               [num](const Tensor& k) { return split(k, num); });
}

Tensor fold_in(const Tensor& key, const Tensor& data) {
  check_key("fold_in", key);
  compiler::trace_of("random.fold_in", {&key, &data});
  if (!data.shape().empty() || is_floating(data.dtype()) || data.dtype() == DType::kBool) {
    throw InvalidArgument(fmt::format("random.fold_in: the data must be an integer scalar, not {}",
                                      compiler::type_text(data.dtype(), data.shape())));
  }
  const Tensor offset = compiler::lax::convert_element_type(data, DType::kUInt32);
  return compiler::lax::bind(make_operation<RandomBitsOp>(RandomBits::kKeys, Shape{}),
                             {key, offset});
}

Tensor fold_in(const Tensor& key, uint32_t data) {
  check_key("fold_in", key);
  return fold_in(key, numpy::full({}, Scalar(static_cast<double>(data)), DType::kUInt32));
}

Array fold_in(const Array& key, uint32_t data) {
  const Array value =
      device_put(HostArray::from_vector(std::vector<uint32_t>{data}, {}), key.sharding());
  return numpy::detail::eager("random.fold_in", {&key, &value},
                              [](const std::vector<Tensor>& t) { return fold_in(t[0], t[1]); });
}

Tensor bits(const Tensor& key, const Shape& shape, DType dtype) {
  check_key("bits", key);
  const RandomBits kind = compiler::random_bits_kind("random.bits", dtype);
  check_shape("bits", shape);
  return random_bits(key, kind, shape);
}

Array bits(const Array& key, const Shape& shape, DType dtype) {
  return eager(fmt::format("random.bits[{}]{}", fmt::join(shape, ","), dtype_name(dtype)), key,
               [shape, dtype](const Tensor& k) { return bits(k, shape, dtype); });
}

// --- samplers

Tensor uniform(const Tensor& key, const Shape& shape, DType dtype, double minval, double maxval) {
  return sample("uniform", key,
                {.distribution = Distribution::kUniform, .dtype = dtype, .a = minval, .b = maxval},
                shape);
}

Array uniform(const Array& key, const Shape& shape, DType dtype, double minval, double maxval) {
  return eager(
      fmt::format("random.uniform{}{}[{},{}]", shape_key(shape), dtype_name(dtype), minval, maxval),
      key, [=](const Tensor& k) { return uniform(k, shape, dtype, minval, maxval); });
}

Tensor normal(const Tensor& key, const Shape& shape, DType dtype) {
  return sample("normal", key, {.distribution = Distribution::kNormal, .dtype = dtype}, shape);
}

Array normal(const Array& key, const Shape& shape, DType dtype) {
  return eager(fmt::format("random.normal{}{}", shape_key(shape), dtype_name(dtype)), key,
               [=](const Tensor& k) { return normal(k, shape, dtype); });
}

Tensor truncated_normal(const Tensor& key, double lower, double upper, const Shape& shape,
                        DType dtype) {
  return sample(
      "truncated_normal", key,
      {.distribution = Distribution::kTruncatedNormal, .dtype = dtype, .a = lower, .b = upper},
      shape);
}

Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape,
                       DType dtype) {
  return eager(fmt::format("random.truncated_normal{}{}[{},{}]", shape_key(shape),
                           dtype_name(dtype), lower, upper),
               key,
               [=](const Tensor& k) { return truncated_normal(k, lower, upper, shape, dtype); });
}

Tensor bernoulli(const Tensor& key, double p, const Shape& shape) {
  return uniform(key, shape, DType::kFloat32) < Scalar(p);
}

Tensor bernoulli(const Tensor& key, const Tensor& p, const std::optional<Shape>& shape) {
  compiler::trace_of("random.bernoulli", {&key, &p});
  if (!is_floating(p.dtype())) {
    throw InvalidArgument(
        fmt::format("random.bernoulli: the probability p must have a floating dtype, not {}",
                    dtype_name(p.dtype())));
  }
  return uniform(key, shape.value_or(p.shape()), p.dtype()) < p;
}

Array bernoulli(const Array& key, double p, const Shape& shape) {
  return eager(fmt::format("random.bernoulli{}[{}]", shape_key(shape), p), key,
               [=](const Tensor& k) { return bernoulli(k, p, shape); });
}

Tensor randint(const Tensor& key, const Shape& shape, int64_t minval, int64_t maxval, DType dtype) {
  if (is_floating(dtype) || dtype == DType::kBool) {
    throw InvalidArgument(fmt::format("random.randint: the dtype must be an integer type, not {}",
                                      dtype_name(dtype)));
  }
  // Below 32 bits JAX draws int32s between the bounds clipped to the dtype, then converts.
  const DType drawn = dtype_size(dtype) < 4 ? DType::kInt32 : dtype;
  if (drawn != dtype) {
    const auto [lo, hi] = int_range(dtype);
    minval = std::clamp(minval, lo, hi);
    maxval = std::clamp(maxval, lo, hi + 1);
  }
  const auto [lo, hi] = int_range(drawn);
  const Sampler s{.distribution = Distribution::kRandint,
                  .dtype = drawn,
                  .low = std::clamp(minval, lo, hi),
                  .high = std::clamp(maxval, lo, hi),
                  .high_past_range = maxval > hi};
  const Tensor values = sample("randint", key, s, shape);
  return drawn == dtype ? values : compiler::lax::convert_element_type(values, dtype);
}

Array randint(const Array& key, const Shape& shape, int64_t minval, int64_t maxval, DType dtype) {
  return eager(
      fmt::format("random.randint{}{}[{},{}]", shape_key(shape), dtype_name(dtype), minval, maxval),
      key, [=](const Tensor& k) { return randint(k, shape, minval, maxval, dtype); });
}

namespace {

// One of the functions of a uniform draw (spmd/random.h), by name.
Tensor transformed(std::string_view what, Distribution d, const Tensor& key, const Shape& shape,
                   DType dtype, double a = 0) {
  return sample(what, key, {.distribution = d, .dtype = dtype, .a = a}, shape);
}

Array transformed(std::string_view what, Distribution d, const Array& key, const Shape& shape,
                  DType dtype, double a = 0) {
  return eager(fmt::format("random.{}{}{}[{}]", what, shape_key(shape), dtype_name(dtype), a), key,
               [=](const Tensor& k) { return transformed(what, d, k, shape, dtype, a); });
}

}  // namespace

Tensor exponential(const Tensor& key, const Shape& shape, DType dtype) {
  return transformed("exponential", Distribution::kExponential, key, shape, dtype);
}
Array exponential(const Array& key, const Shape& shape, DType dtype) {
  return transformed("exponential", Distribution::kExponential, key, shape, dtype);
}
Tensor laplace(const Tensor& key, const Shape& shape, DType dtype) {
  return transformed("laplace", Distribution::kLaplace, key, shape, dtype);
}
Array laplace(const Array& key, const Shape& shape, DType dtype) {
  return transformed("laplace", Distribution::kLaplace, key, shape, dtype);
}
Tensor logistic(const Tensor& key, const Shape& shape, DType dtype) {
  return transformed("logistic", Distribution::kLogistic, key, shape, dtype);
}
Array logistic(const Array& key, const Shape& shape, DType dtype) {
  return transformed("logistic", Distribution::kLogistic, key, shape, dtype);
}
Tensor cauchy(const Tensor& key, const Shape& shape, DType dtype) {
  return transformed("cauchy", Distribution::kCauchy, key, shape, dtype);
}
Array cauchy(const Array& key, const Shape& shape, DType dtype) {
  return transformed("cauchy", Distribution::kCauchy, key, shape, dtype);
}
Tensor lognormal(const Tensor& key, double sigma, const Shape& shape, DType dtype) {
  return transformed("lognormal", Distribution::kLognormal, key, shape, dtype, sigma);
}
Array lognormal(const Array& key, double sigma, const Shape& shape, DType dtype) {
  return transformed("lognormal", Distribution::kLognormal, key, shape, dtype, sigma);
}

Tensor lognormal(const Tensor& key, const Tensor& sigma, const Shape& shape, DType dtype) {
  if (dtype == DType::kBFloat16) {  // XLA keeps JAX's order in bfloat16
    return numpy::exp(normal(key, shape, dtype) * numpy::astype(sigma, dtype));
  }
  // exp(erf_inv(u) (sqrt(2) sigma)): XLA folds sqrt(2) sigma into one factor, as the sampler
  // with one sigma does (kernels/random_samplers.h).
  const Tensor draw =
      sample("lognormal", key, {.distribution = Distribution::kErfInv, .dtype = dtype}, shape);
  const Tensor sqrt2 =
      compiler::lax::full(key.trace(), Shape{}, dtype, static_cast<double>(std::sqrt(2.0f)));
  return numpy::exp(draw * (sqrt2 * numpy::astype(sigma, dtype)));
}

Array lognormal(const Array& key, const Array& sigma, const Shape& shape, DType dtype) {
  return numpy::detail::eager(
      fmt::format("random.lognormal{}{}", shape_key(shape), dtype_name(dtype)), {&key, &sigma},
      [=](const std::vector<Tensor>& t) { return lognormal(t[0], t[1], shape, dtype); });
}

Tensor gumbel(const Tensor& key, const Shape& shape, DType dtype) {
  return sample("gumbel", key, {.distribution = Distribution::kGumbel, .dtype = dtype}, shape);
}

Array gumbel(const Array& key, const Shape& shape, DType dtype) {
  return eager(fmt::format("random.gumbel{}{}", shape_key(shape), dtype_name(dtype)), key,
               [=](const Tensor& k) { return gumbel(k, shape, dtype); });
}

Tensor categorical(const Tensor& key, const Tensor& logits, int axis,
                   const std::optional<Shape>& shape) {
  compiler::trace_of("random.categorical", {&key, &logits});
  const int ax = numpy::internal::normalize_axis("random.categorical", axis, logits.shape());
  Shape batch = logits.shape();
  batch.erase(batch.begin() + ax);
  const Shape out = shape.value_or(batch);
  if (out.size() < batch.size() ||
      !std::equal(batch.begin(), batch.end(), out.end() - static_cast<int64_t>(batch.size()))) {
    throw InvalidArgument(fmt::format(
        "random.categorical: shape ({}) must end with the logits' shape without axis {}: ({})",
        fmt::join(out, ", "), ax, fmt::join(batch, ", ")));
  }
  // JAX's Gumbel-max trick: gumbel noise over the samples' leading dimensions and the logits'.
  const size_t lead = out.size() - batch.size();
  Shape noise(out.begin(), out.begin() + static_cast<int64_t>(lead));
  Shape expanded(lead, 1);
  for (int64_t d : logits.shape()) {
    noise.push_back(d);
    expanded.push_back(d);
  }
  const Tensor g = gumbel(key, noise, logits.dtype());
  return numpy::argmax(g + numpy::reshape(logits, expanded), static_cast<int>(lead) + ax);
}

Array categorical(const Array& key, const Array& logits, int axis) {
  return numpy::detail::eager(
      fmt::format("random.categorical[{}]", axis), {&key, &logits},
      [axis](const std::vector<Tensor>& t) { return categorical(t[0], t[1], axis); });
}

Tensor permutation(const Tensor& key, const Tensor& x, int axis) {
  check_key("permutation", key);
  compiler::trace_of("random.permutation", {&key, &x});
  if (x.shape().empty()) {
    throw InvalidArgument(
        "random.permutation: x must be at least one-dimensional (or an integer n)");
  }
  const int ax = numpy::internal::normalize_axis("random.permutation", axis, x.shape());
  return compiler::lax::bind(make_operation<RandomPermutationOp>(ax), {key, x});
}

Tensor permutation(const Tensor& key, int64_t n) {
  if (n < 0) throw InvalidArgument(fmt::format("random.permutation: n must be >= 0, not {}", n));
  check_key("permutation", key);
  return permutation(key, numpy::arange(n, DType::kInt32));
}

Array permutation(const Array& key, int64_t n) {
  return eager(fmt::format("random.permutation[{}]", n), key,
               [n](const Tensor& k) { return permutation(k, n); });
}

Array permutation(const Array& key, const Array& x, int axis) {
  return numpy::detail::eager(
      fmt::format("random.permutation[axis={}]", axis), {&key, &x},
      [axis](const std::vector<Tensor>& t) { return permutation(t[0], t[1], axis); });
}

}  // namespace spmd::random
