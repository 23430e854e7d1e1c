// Element-wise block arithmetic with NumPy broadcasting.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "compute/ops/numeric.h"
#include "spmd/block_ops.h"

namespace spmd {
namespace {

using ops::compute_t;
using ops::load;
using ops::store;

std::string describe(const Block& b) {
  return fmt::format("{}[{}]", dtype_name(b.dtype()), fmt::join(b.shape(), ", "));
}

// The broadcast shape of a and b, and each operand's element strides in it (0 along a
// dimension it is broadcast over).
struct Broadcast {
  Shape shape;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
};

std::vector<int64_t> strides_in(const Shape& operand, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  const size_t offset = out.size() - operand.size();
  for (size_t i = operand.size(); i-- > 0;) {
    strides[offset + i] = operand[i] == 1 && out[offset + i] != 1 ? 0 : stride;
    stride *= operand[i];
  }
  return strides;
}

Broadcast broadcast(const char* what, const Block& a, const Block& b) {
  if (a.dtype() != b.dtype()) {
    throw InvalidArgument(fmt::format("{}: operands {} and {} have different dtypes", what,
                                      describe(a), describe(b)));
  }
  const size_t rank = std::max(a.shape().size(), b.shape().size());
  Broadcast out;
  out.shape.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.shape().size() ? 1 : a.shape()[i - (rank - a.shape().size())];
    const int64_t db = i < rank - b.shape().size() ? 1 : b.shape()[i - (rank - b.shape().size())];
    if (da != db && da != 1 && db != 1) {
      throw InvalidArgument(fmt::format(
          "{}: shapes {} and {} do not broadcast (dimension {} of the result: {} vs {})", what,
          describe(a), describe(b), i, da, db));
    }
    out.shape[i] = da == 1 ? db : da;
  }
  out.a_strides = strides_in(a.shape(), out.shape);
  out.b_strides = strides_in(b.shape(), out.shape);
  return out;
}

template <typename T, class Op>
Block binary(const char* what, const Block& a, const Block& b, Op op) {
  const Broadcast bc = broadcast(what, a, b);
  Block out = Block::uninitialized(a.dtype(), bc.shape);
  const T* pa = a.data<T>().data();
  const T* pb = b.data<T>().data();
  T* po = out.mutable_data<T>().data();
  const int64_t n = out.size();
  if (n == 0) return out;
  if (a.shape() == b.shape()) {
    for (int64_t i = 0; i < n; ++i) po[i] = store<T>(op(load(pa[i]), load(pb[i])));
    return out;
  }
  // An odometer over the result, the last dimension in the inner loop.
  const size_t rank = bc.shape.size();
  if (rank == 0) {
    po[0] = store<T>(op(load(pa[0]), load(pb[0])));
    return out;
  }
  const int64_t inner = bc.shape[rank - 1];
  const int64_t sa = bc.a_strides[rank - 1];
  const int64_t sb = bc.b_strides[rank - 1];
  std::vector<int64_t> at(rank, 0);
  int64_t ia = 0;
  int64_t ib = 0;
  for (int64_t row = 0; row < n / inner; ++row) {
    for (int64_t j = 0; j < inner; ++j) {
      po[row * inner + j] = store<T>(op(load(pa[ia + j * sa]), load(pb[ib + j * sb])));
    }
    for (size_t d = rank - 1; d-- > 0;) {
      ia += bc.a_strides[d];
      ib += bc.b_strides[d];
      if (++at[d] < bc.shape[d]) break;
      ia -= bc.a_strides[d] * bc.shape[d];
      ib -= bc.b_strides[d] * bc.shape[d];
      at[d] = 0;
    }
  }
  return out;
}

template <class Op>
Block numeric_binary(const char* what, const Block& a, const Block& b, Op op) {
  return ops::visit_numeric(a.dtype(), what, [&](auto tag) {
    using T = decltype(tag);
    return binary<T>(what, a, b, [&](compute_t<T> x, compute_t<T> y) {
      return static_cast<compute_t<T>>(op(x, y));
    });
  });
}

}  // namespace

Block add(const Block& a, const Block& b) {
  return numeric_binary("add", a, b, [](auto x, auto y) { return x + y; });
}

Block sub(const Block& a, const Block& b) {
  return numeric_binary("sub", a, b, [](auto x, auto y) { return x - y; });
}

Block mul(const Block& a, const Block& b) {
  return numeric_binary("mul", a, b, [](auto x, auto y) { return x * y; });
}

Block div(const Block& a, const Block& b) {
  return numeric_binary("div", a, b, [](auto x, auto y) {
    if constexpr (std::is_integral_v<decltype(y)>) {
      if (y == 0) throw InvalidArgument("div: integer division by zero");
    }
    return x / y;
  });
}

Block scale(const Block& a, double s) {
  return ops::visit_numeric(a.dtype(), "scale", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    Block out = Block::uninitialized(a.dtype(), a.shape());
    const auto in = a.data<T>();
    auto dst = out.mutable_data<T>();
    const C factor = static_cast<C>(s);
    for (size_t i = 0; i < in.size(); ++i) dst[i] = store<T>(static_cast<C>(load(in[i]) * factor));
    return out;
  });
}

Block sqrt(const Block& a) {
  return ops::visit_floating(a.dtype(), "sqrt", [&](auto tag) {
    using T = decltype(tag);
    Block out = Block::uninitialized(a.dtype(), a.shape());
    const auto in = a.data<T>();
    auto dst = out.mutable_data<T>();
    for (size_t i = 0; i < in.size(); ++i) dst[i] = store<T>(std::sqrt(load(in[i])));
    return out;
  });
}

}  // namespace spmd
