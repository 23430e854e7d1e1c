// spmd::numpy's C++ front door under a generator (rapidcheck): every operation, on operands of
// any dtype and of random shapes (rank 0 to 3, dimensions 0 to 3, broadcastable or not), with
// random axes (out of range and repeated included), shapes to reshape to, permutations and
// slices, run through jit on one device. Each call either returns an array whose size matches
// its shape or throws an spmd::Error; anything else (a crash, std::out_of_range, bad_alloc,
// bad_variant_access …) fails the run with the inputs that caused it. The values are each
// dtype's awkward ones (0, -1, the lowest integer, NaN, inf), so integer division and powers
// meet them too. The Python API has its own fuzzer (tests/python/api_fuzz.py).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/elementwise.h"

namespace {

namespace jnp = spmd::numpy;
using spmd::DType;
using spmd::HostArray;
using spmd::Shape;
using spmd::Tensor;

const std::vector<DType> kDtypes = {
    DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,  DType::kInt64,
    DType::kUInt8,    DType::kUInt16,  DType::kUInt32, DType::kUInt64, DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// An array of `shape`, its elements cycling through values awkward for every dtype (converted,
// saturating, by the CPU kernel), from the `offset`-th on.
HostArray awkward(DType dtype, const Shape& shape, size_t offset = 0) {
  static const std::vector<double> kValues = {0.0, -1.0,     1.0,  -2147483648.0, 2.5,
                                              NAN, INFINITY, -0.0, 7.0,           1e30};
  HostArray h = HostArray::zeros(dtype, shape);
  const int64_t n = spmd::shape_size(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = kValues[(static_cast<size_t>(i) + offset) % kValues.size()];
  spmd::kernels::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(v.data()), n},
                         h.mutable_bytes().data(), n);
  return h;
}

spmd::Array on_device(const HostArray& h) {
  static const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  return spmd::make_array_from_callback(h.shape(), spmd::NamedSharding(mesh, spmd::P()),
                                        [&](const spmd::Index&) { return h; });
}

rc::Gen<Shape> shapes() {
  return rc::gen::container<Shape>(*rc::gen::inRange<size_t>(0, 4),
                                   rc::gen::inRange<int64_t>(0, 4));
}

// What one drawn call does with its operands a and b (and the draw's other choices).
struct Draw {
  int op;
  int axis;
  std::vector<int> axes;
  bool keepdims;
  DType to;
  Shape target;
  std::vector<int64_t> start, stop;
};

constexpr int kOps = 53;

Tensor apply_integer(const Draw& d, const Tensor& a, const Tensor& b);

Tensor apply(const Draw& d, const Tensor& a, const Tensor& b) {
  switch (d.op) {
    case 0:
      return jnp::add(a, b);
    case 1:
      return jnp::subtract(a, b);
    case 2:
      return jnp::multiply(a, b);
    case 3:
      return jnp::divide(a, b);
    case 4:
      return jnp::power(a, b);
    case 5:
      return jnp::maximum(a, b);
    case 6:
      return jnp::minimum(a, b);
    case 7:
      return jnp::equal(a, b);
    case 8:
      return jnp::less(a, b);
    case 9:
      return jnp::where(jnp::greater(a, b), a, b);
    case 10:
      return jnp::matmul(a, b);
    case 11:
      return jnp::dot(a, b);
    case 12:
      return jnp::einsum("ij,jk->ik", a, b);
    case 13:
      return jnp::negative(a);
    case 14:
      return jnp::exp(a);
    case 15:
      return jnp::log(a);
    case 16:
      return jnp::tanh(a);
    case 17:
      return jnp::sqrt(a);
    case 18:
      return jnp::rsqrt(a);
    case 19:
      return jnp::abs(a);
    case 20:
      return jnp::sign(a);
    case 21:
      return jnp::relu(a);
    case 22:
      return jnp::astype(a, d.to);
    case 23:
      return jnp::sum(a, d.axes, d.keepdims);
    case 24:
      return jnp::mean(a, d.axes, d.keepdims);
    case 25:
      return jnp::max(a, d.axes, d.keepdims);
    case 26:
      return jnp::var(a, d.axes, 1, d.keepdims);
    case 27:
      return jnp::cumsum(a, d.axis);
    case 28:
      return jnp::argmax(a, d.axis);
    case 29:
      return jnp::reshape(a, d.target);
    case 30:
      return jnp::transpose(a, d.axes);
    case 31:
      return jnp::broadcast_to(a, d.target);
    case 32:
      return jnp::expand_dims(a, d.axis);
    case 33:
      return jnp::squeeze(a, d.axes);
    case 34:
      return jnp::slice(a, d.start, d.stop);
    case 35:
      return jnp::concatenate({a, b}, d.axis);
    case 36:
      return jnp::softmax(a, d.axes);
    case 37:
      return jnp::logsumexp(a, d.axes, d.keepdims);
    default:
      return apply_integer(d, a, b);
  }
}

// Tensor (*)(const Tensor&, const Tensor&) by number: floor division, remainders, the bitwise
// and logical operations, shifts and rounding (ops 38 to 52).
Tensor apply_integer(const Draw& d, const Tensor& a, const Tensor& b) {
  switch (d.op) {
    case 38:
      return jnp::floor_divide(a, b);
    case 39:
      return jnp::remainder(a, b);
    case 40:
      return jnp::fmod(a, b);
    case 41:
      return jnp::divmod(a, b).second;
    case 42:
      return jnp::bitwise_and(a, b);
    case 43:
      return jnp::bitwise_xor(a, b);
    case 44:
      return jnp::left_shift(a, b);
    case 45:
      return jnp::right_shift(a, b);
    case 46:
      return jnp::invert(a);
    case 47:
      return jnp::logical_and(a, b);
    case 48:
      return jnp::logical_not(a);
    case 49:
      return jnp::floor(a);
    case 50:
      return jnp::trunc(a);
    case 51:
      return jnp::rint(a);
    default:
      return jnp::round(a, d.axis);
  }
}

RC_GTEST_PROP(NumpyFuzz, EveryCallReturnsAConsistentArrayOrThrowsAnSpmdError, ()) {
  const DType ta = *rc::gen::elementOf(kDtypes);
  const Shape sa = *shapes();
  const bool same = *rc::gen::arbitrary<bool>();
  const DType tb = same ? ta : *rc::gen::elementOf(kDtypes);
  const Shape sb = *rc::gen::oneOf(rc::gen::just(sa), shapes());
  Draw d{
      *rc::gen::inRange(0, kOps),
      *rc::gen::inRange(-5, 5),
      *rc::gen::container<std::vector<int>>(*rc::gen::inRange<size_t>(0, 4),
                                            rc::gen::inRange(-5, 5)),
      *rc::gen::arbitrary<bool>(),
      *rc::gen::elementOf(kDtypes),
      *rc::gen::container<Shape>(*rc::gen::inRange<size_t>(0, 4), rc::gen::inRange<int64_t>(-2, 5)),
      *rc::gen::container<std::vector<int64_t>>(sa.size(), rc::gen::inRange<int64_t>(-2, 5)),
      *rc::gen::container<std::vector<int64_t>>(sa.size(), rc::gen::inRange<int64_t>(-2, 5))};
  const HostArray x = awkward(ta, sa, *rc::gen::inRange<size_t>(0, 10));
  const HostArray y = awkward(tb, sb, *rc::gen::inRange<size_t>(0, 10));
  try {
    const HostArray r = spmd::jit([&](const Tensor& a, const Tensor& b) { return apply(d, a, b); })(
                            on_device(x), on_device(y))
                            .to_host();
    RC_ASSERT(r.bytes().size() ==
              static_cast<size_t>(spmd::shape_size(r.shape())) * spmd::dtype_size(r.dtype()));
    RC_TAG("computed");
  } catch (const spmd::Error& e) {
    RC_TAG(std::string(e.what()).substr(0, 60));
    RC_ASSERT(std::string(e.what()).size() > 10);  // a refusal that says something
  }
}

// NumPy's broadcast of two shapes that broadcast.
Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

// The same guard over the block operations shard_map's functions use (block_ops.h), whose
// integer division trapped on the lowest value over -1 (SIGFPE) until session 29.
RC_GTEST_PROP(BlockFuzz, EveryBlockOperationReturnsOrThrowsAnSpmdError, ()) {
  const DType ta = *rc::gen::elementOf(kDtypes);
  const DType tb = *rc::gen::oneOf(rc::gen::just(ta), rc::gen::elementOf(kDtypes));
  const Shape sa = *shapes();
  const Shape sb = *rc::gen::oneOf(rc::gen::just(sa), shapes());
  const int op = *rc::gen::inRange(0, 11);
  const int axis = *rc::gen::inRange(-4, 4);
  const spmd::Block a(awkward(ta, sa, *rc::gen::inRange<size_t>(0, 10)));
  const spmd::Block b(awkward(tb, sb, *rc::gen::inRange<size_t>(0, 10)));
  try {
    spmd::Block r;
    switch (op) {
      case 0:
        r = spmd::add(a, b);
        break;
      case 1:
        r = spmd::sub(a, b);
        break;
      case 2:
        r = spmd::mul(a, b);
        break;
      case 3:
        r = spmd::div(a, b);
        break;
      case 4:
        r = spmd::scale(a, -1.5);
        break;
      case 5:
        r = spmd::sqrt(a);
        break;
      case 6:
        r = spmd::sum(a);
        break;
      case 7:
        r = spmd::sum(a, axis);
        break;
      case 8:
        r = spmd::mean(a);
        break;
      case 9:
        r = spmd::mean(a, axis);
        break;
      default:
        r = spmd::matmul(a, b, axis % 2 != 0, axis > 0);
        break;
    }
    if (op <= 3) {  // element-wise: NumPy's broadcast of the two shapes
      RC_ASSERT(r.shape() == broadcast(sa, sb));
    } else if (op == 6 || op == 8) {
      RC_ASSERT(r.shape().empty());
    } else if (op == 7 || op == 9) {
      RC_ASSERT(r.shape().size() + 1 == sa.size());
    } else if (op != 10) {
      RC_ASSERT(r.shape() == sa);
    }
    RC_TAG("computed");
  } catch (const spmd::Error& e) {
    RC_TAG("refused");
    RC_ASSERT(std::string(e.what()).size() > 10);
  }
}

}  // namespace
