// spmd::random's front end (random.h): checks the user's arguments, then one random_bits
// operation (ops/random.h); the functions on Arrays run through spmd::numpy's eager jits.
#include "spmd/random.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <string>
#include <vector>

#include "jit/numpy_internal.h"
#include "jit/ops/random.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"
#include "spmd/numpy_eager.h"
#include "spmd/runtime.h"
#include "spmd/sharding.h"

namespace spmd::random {
namespace {

using compiler::make_operation;
using compiler::RandomBitsOp;
using kernels::RandomBits;

void check_key(std::string_view what, const Tensor& key) {
  compiler::trace_of(what, {&key});
  if (key.dtype() != DType::kUInt32 || key.shape() != Shape{2}) {
    throw InvalidArgument(fmt::format(
        "random.{}: the key must be one raw key, uint32[2] (as PRNGKey makes it), not {}", what,
        compiler::type_text(key.dtype(), key.shape())));
  }
}

Tensor random_bits(const Tensor& key, RandomBits kind, const Shape& shape) {
  return key.trace()->apply(make_operation<RandomBitsOp>(kind, shape), {key.value()});
}

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
  const Tensor offset = compiler::convert_to(data, DType::kUInt32);
  return key.trace()->apply(make_operation<RandomBitsOp>(RandomBits::kKeys, Shape{}),
                            {key.value(), offset.value()});
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
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(
          fmt::format("random.bits: shape ({}) has a negative dimension", fmt::join(shape, ", ")));
    }
  }
  return random_bits(key, kind, shape);
}

Array bits(const Array& key, const Shape& shape, DType dtype) {
  return eager(fmt::format("random.bits[{}]{}", fmt::join(shape, ","), dtype_name(dtype)), key,
               [shape, dtype](const Tensor& k) { return bits(k, shape, dtype); });
}

}  // namespace spmd::random
