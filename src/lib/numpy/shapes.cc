// spmd::numpy's shape operations, contractions, reductions and creation functions: the user's
// arguments checked as NumPy and JAX check them, then the primitives of lax.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/sharding_in_types.h"
#include "jit/tensor_arithmetic.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/error.h"
#include "spmd/grad.h"
#include "spmd/jit.h"
#include "spmd/numpy.h"

namespace spmd::numpy::internal {

int normalize_axis(std::string_view what, int axis, const Shape& shape) {
  const int rank = static_cast<int>(shape.size());
  if (axis < -rank || axis >= rank) {
    throw InvalidArgument(fmt::format("{}: axis {} is out of range for shape ({})", what, axis,
                                      fmt::join(shape, ", ")));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> reduced_axes(std::string_view what, const AxisList& axes, const Shape& shape) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (size_t i = 0; i < shape.size(); ++i) out.push_back(static_cast<int64_t>(i));
    return out;
  }
  for (int a : axes) out.push_back(normalize_axis(what, a, shape));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw InvalidArgument(
        fmt::format("{}: an axis is repeated in ({})", what, fmt::join(axes, ", ")));
  }
  return out;
}

Tensor reduce(std::string_view what, kernels::Reduce code, const Tensor& a, const AxisList& axes,
              bool keepdims, DType dtype) {
  compiler::trace_of(what, {&a});
  const std::vector<int64_t> r = reduced_axes(what, axes, a.shape());
  const Tensor x = compiler::lax::convert_element_type(a, dtype);
  Tensor out = compiler::lax::reduce(code, x, r);
  if (!keepdims) return out;
  Shape kept = a.shape();
  for (int64_t axis : r) kept[static_cast<size_t>(axis)] = 1;
  return compiler::lax::reshape(out, kept);
}

PartitionSpec out_sharding_spec(const compiler::Trace& trace, std::string_view what,
                                const PartitionSpec& out_sharding, size_t rank) {
  if (trace.mesh() == nullptr) {
    throw InvalidArgument(fmt::format("{}: out_sharding outside a jit over a mesh", what));
  }
  return compiler::checked_type_spec(what, out_sharding, *trace.mesh(), rank);
}

}  // namespace spmd::numpy::internal

namespace spmd::numpy {

namespace lax = compiler::lax;
using compiler::ValueType;
using internal::normalize_axis;

namespace {

// jnp.sum's dtype: bool and narrow integers widen to 32 bits.
DType sum_dtype(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kInt16:
      return DType::kInt32;
    case DType::kUInt8:
    case DType::kUInt16:
      return DType::kUInt32;
    default:
      return t;
  }
}

}  // namespace

Tensor sum(const Tensor& a, const AxisList& axes, bool keepdims) {
  if (is_half_dtype(a.dtype())) {  // in float32 throughout, across devices too; rounded once
    const Tensor wide = lax::convert_element_type(a, DType::kFloat32);
    return lax::convert_element_type(
        internal::reduce("sum", kernels::Reduce::kSum, wide, axes, keepdims, DType::kFloat32),
        a.dtype());
  }
  return internal::reduce("sum", kernels::Reduce::kSum, a, axes, keepdims, sum_dtype(a.dtype()));
}

namespace {

// The product over `axes` of x (already in the dtype it multiplies in) as one reduction of one
// axis: several reduced axes moved last and flattened, so that each result multiplies its
// factors in their row-major order (XLA's order, where a reduction of one axis after another
// rounds apart from it by several ulps).
Tensor product_over(const Tensor& x, const std::vector<int64_t>& axes) {
  if (axes.size() <= 1) return lax::reduce(kernels::Reduce::kProd, x, axes);
  const auto rank = static_cast<int64_t>(x.shape().size());
  std::vector<int64_t> perm;
  Shape flat;
  for (int64_t d = 0; d < rank; ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), d)) {
      perm.push_back(d);
      flat.push_back(x.shape()[static_cast<size_t>(d)]);
    }
  }
  const auto kept = static_cast<int64_t>(perm.size());
  int64_t n = 1;
  for (int64_t d : axes) n *= x.shape()[static_cast<size_t>(d)];
  perm.insert(perm.end(), axes.begin(), axes.end());
  flat.push_back(n);
  return lax::reduce(kernels::Reduce::kProd, lax::reshape(lax::transpose(x, perm), flat), {kept});
}

}  // namespace

Tensor prod(const Tensor& a, const AxisList& axes, bool keepdims) {
  compiler::trace_of("prod", {&a});
  const std::vector<int64_t> r = internal::reduced_axes("prod", axes, a.shape());
  // Half types multiply in float32 and round once, as jnp.prod upcasts them.
  const DType dtype = is_half_dtype(a.dtype()) ? DType::kFloat32 : sum_dtype(a.dtype());
  Tensor out = lax::convert_element_type(product_over(lax::convert_element_type(a, dtype), r),
                                         is_half_dtype(a.dtype()) ? a.dtype() : dtype);
  if (!keepdims) return out;
  Shape kept = a.shape();
  for (int64_t axis : r) kept[static_cast<size_t>(axis)] = 1;
  return lax::reshape(out, kept);
}

namespace {

// jnp.cumsum and jnp.cumprod: the dtype kept (an int8 sum wraps in int8), bool counted in int32.
// Narrow types scan in their 32-bit kind: integers wrap back to the same bits (sums and products
// modulo 2^k agree), half types round once.
Tensor cumulative(const char* what, const Tensor& a, std::optional<int> axis, bool product) {
  compiler::trace_of(what, {&a});
  const Tensor x = axis ? a : reshape(a, {a.size()});
  const int ax = axis ? normalize_axis(what, *axis, a.shape()) : 0;
  const DType dtype = a.dtype() == DType::kBool ? DType::kInt32 : a.dtype();
  const DType scan = is_half_dtype(dtype) ? DType::kFloat32 : sum_dtype(dtype);
  const Tensor wide = lax::convert_element_type(x, scan);
  Tensor value =
      lax::convert_element_type(product ? lax::cumprod(wide, ax) : lax::cumsum(wide, ax), dtype);
  if (product || !is_half_dtype(dtype)) return value;
  // JAX's half-type cumsum is one primitive whose transpose sums in the half type itself, step
  // by step (XLA's reduce-window), not in float32 as the value is.
  return lax::with_vjp(what, {a}, value, [ax, axis](const auto& in, const Tensor& g) {
    const Tensor flat = axis ? g : reshape(g, {g.size()});
    const Tensor back = lax::reverse_cumsum(flat, ax);
    return std::vector<std::optional<Tensor>>{axis ? back : reshape(back, in[0].shape())};
  });
}

}  // namespace

Tensor cumsum(const Tensor& a, std::optional<int> axis) {
  return cumulative("cumsum", a, axis, false);
}
Tensor cumprod(const Tensor& a, std::optional<int> axis) {
  return cumulative("cumprod", a, axis, true);
}

namespace {

// How many elements of `a` each result of a reduction over `axes` takes (InvalidArgument
// beyond int64, which a shape with an empty dimension elsewhere can reach).
int64_t reduced_count(const char* what, const Tensor& a, const AxisList& axes) {
  Shape reduced;
  for (int64_t i : internal::reduced_axes(what, axes, a.shape())) {
    reduced.push_back(a.shape()[static_cast<size_t>(i)]);
  }
  return shape_size(reduced);
}

}  // namespace

Tensor mean(const Tensor& a, const AxisList& axes, bool keepdims) {
  compiler::trace_of("mean", {&a});
  const int64_t count = reduced_count("mean", a, axes);
  // As jnp.mean: half types sum and divide in float32 (their count alone may pass 65504).
  const DType t = compiler::floating_of(a.dtype());
  const DType wide = is_half_dtype(t) ? DType::kFloat32 : t;
  const Tensor s = internal::reduce("mean", kernels::Reduce::kSum,
                                    lax::convert_element_type(a, wide), axes, keepdims, wide);
  return lax::convert_element_type(s / Scalar(static_cast<double>(count)), t);
}

Tensor var(const Tensor& a, const AxisList& axes, double ddof, bool keepdims) {
  compiler::trace_of("var", {&a});
  const int64_t count = reduced_count("var", a, axes);
  // jnp.var: the mean of the squared deviations from the mean, in float32 for half types,
  // divided by count - ddof (counted in that type), rounded once to the result's type.
  const DType dtype = compiler::floating_of(a.dtype());
  const DType compute = is_half_dtype(dtype) ? DType::kFloat32 : dtype;
  const Tensor x = lax::convert_element_type(a, compute);
  const Tensor centered = x - mean(x, axes, /*keepdims=*/true);
  const Tensor total = sum(centered * centered, axes, keepdims);
  const double normalizer =
      compute == DType::kFloat32
          ? static_cast<double>(static_cast<float>(count) - static_cast<float>(ddof))
          : static_cast<double>(count) - ddof;
  if (!(normalizer > 0)) {  // jnp.var's NaN where nothing is left to divide by
    return lax::full_like(lax::convert_element_type(total, dtype), std::nan(""));
  }
  return lax::convert_element_type(total / Scalar(normalizer), dtype);
}

Tensor max(const Tensor& a, const AxisList& axes, bool keepdims) {
  return internal::reduce("max", kernels::Reduce::kMax, a, axes, keepdims, a.dtype());
}

Tensor min(const Tensor& a, const AxisList& axes, bool keepdims) {
  return internal::reduce("min", kernels::Reduce::kMin, a, axes, keepdims, a.dtype());
}

Tensor argmax(const Tensor& a, std::optional<int> axis) {
  compiler::trace_of("argmax", {&a});
  if (!axis) return argmax(reshape(a, {a.size()}), 0);
  const int ax = normalize_axis("argmax", *axis, a.shape());
  if (a.shape()[static_cast<size_t>(ax)] == 0) {
    throw InvalidArgument(
        fmt::format("argmax: axis {} of shape ({}) is empty", ax, fmt::join(a.shape(), ", ")));
  }
  return lax::argmax(a, ax);
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  compiler::trace_of("reshape", {&a});
  Shape out;
  try {
    out = reshaped(a.shape(), shape);  // sharding.h: -1 inferred, sizes checked
  } catch (const InvalidArgument&) {
    throw InvalidArgument(fmt::format("reshape: cannot reshape {} into shape ({})",
                                      compiler::type_text(a.dtype(), a.shape()),
                                      fmt::join(shape, ", ")));
  }
  return lax::reshape(a, out);
}

Tensor transpose(const Tensor& a, const std::vector<int>& axes) {
  compiler::trace_of("transpose", {&a});
  const size_t rank = a.shape().size();
  std::vector<int64_t> perm;
  if (axes.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  } else {
    for (int x : axes) perm.push_back(normalize_axis("transpose", x, a.shape()));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (perm.size() != rank || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw InvalidArgument(fmt::format("transpose: axes ({}) are not a permutation of {} axes",
                                      fmt::join(axes, ", "), rank));
  }
  return lax::transpose(a, perm);
}

Tensor broadcast_to(const Tensor& a, const Shape& shape) {
  compiler::trace_of("broadcast_to", {&a});
  if (compiler::broadcast_shapes("broadcast_to", a.shape(), shape) != shape) {
    throw InvalidArgument(fmt::format("broadcast_to: cannot broadcast ({}) to ({})",
                                      fmt::join(a.shape(), ", "), fmt::join(shape, ", ")));
  }
  return lax::broadcast(a, shape);
}

Tensor expand_dims(const Tensor& a, int axis) {
  Shape shape = a.shape();
  Shape longer = shape;
  longer.push_back(1);
  const int ax = normalize_axis("expand_dims", axis, longer);
  shape.insert(shape.begin() + ax, 1);
  return reshape(a, shape);
}

Tensor squeeze(const Tensor& a, const AxisList& axes) {
  const Shape& in = a.shape();
  std::vector<bool> drop(in.size(), false);
  for (size_t i = 0; i < in.size(); ++i) drop[i] = axes.empty() && in[i] == 1;
  for (int x : axes) {
    const int ax = normalize_axis("squeeze", x, in);
    if (in[static_cast<size_t>(ax)] != 1) {
      throw InvalidArgument(fmt::format("squeeze: axis {} of shape ({}) has size {}, not 1", x,
                                        fmt::join(in, ", "), in[static_cast<size_t>(ax)]));
    }
    drop[static_cast<size_t>(ax)] = true;
  }
  Shape shape;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) shape.push_back(in[i]);
  }
  return reshape(a, shape);
}

Tensor slice(const Tensor& a, const std::vector<int64_t>& start, const std::vector<int64_t>& stop) {
  compiler::trace_of("slice", {&a});
  const Shape& in = a.shape();
  if (start.size() > in.size() || stop.size() != start.size()) {
    throw InvalidArgument(fmt::format(
        "slice: {} starts and {} stops for shape ({}): give one of each per leading dimension",
        start.size(), stop.size(), fmt::join(in, ", ")));
  }
  std::vector<int64_t> begin(in.size(), 0);
  Shape extent = in;
  for (size_t i = 0; i < start.size(); ++i) {
    auto clip = [&](int64_t v) { return std::clamp(v < 0 ? v + in[i] : v, int64_t{0}, in[i]); };
    begin[i] = clip(start[i]);
    extent[i] = std::max<int64_t>(0, clip(stop[i]) - begin[i]);
  }
  return lax::slice(a, begin, extent);
}

Tensor strided(const Tensor& a, int axis, int64_t step) {
  compiler::trace_of("strided", {&a});
  const int ax = normalize_axis("strided", axis, a.shape());
  if (step == 0) throw InvalidArgument("strided: a step of 0 (every step is a nonzero integer)");
  if (step == 1) return a;
  const Shape& in = a.shape();
  const auto d = static_cast<size_t>(ax);
  const int64_t stride = step < 0 ? -step : step;
  Shape extent = in;
  extent[d] = (in[d] + stride - 1) / stride;
  std::vector<int64_t> start(in.size(), 0), by(in.size(), 1);
  by[d] = step;
  if (step < 0 && extent[d] > 0) start[d] = (extent[d] - 1) * stride;
  return lax::strided_slice(a, start, by, extent);
}

Tensor strided_slice(const Tensor& a, const std::vector<int64_t>& start,
                     const std::vector<int64_t>& step, const Shape& extent) {
  compiler::trace_of("strided_slice", {&a});
  bool whole = extent == a.shape();
  for (int64_t s : step) whole = whole && s == 1;
  if (whole && start == std::vector<int64_t>(start.size(), 0)) return a;
  return lax::strided_slice(a, start, step, extent);
}

Tensor concatenate(const std::vector<Tensor>& parts, int axis) {
  if (parts.empty()) throw InvalidArgument("concatenate: no arrays to concatenate");
  const Tensor& first = parts[0];
  compiler::trace_of("concatenate", {&first});
  const int ax = normalize_axis("concatenate", axis, first.shape());
  DType dtype = first.dtype();
  Shape shape = first.shape();
  shape[static_cast<size_t>(ax)] = 0;
  for (const Tensor& p : parts) {
    compiler::trace_of("concatenate", {&first, &p});
    Shape other = p.shape();
    if (other.size() == shape.size()) other[static_cast<size_t>(ax)] = 0;
    if (other != shape) {
      throw InvalidArgument(fmt::format("concatenate: {} does not match {} outside axis {}",
                                        compiler::type_text(p.dtype(), p.shape()),
                                        compiler::type_text(first.dtype(), first.shape()), ax));
    }
    dtype = compiler::promote(dtype, p.dtype());
  }
  std::vector<Tensor> converted;
  converted.reserve(parts.size());
  for (const Tensor& p : parts) converted.push_back(lax::convert_element_type(p, dtype));
  return lax::concatenate(converted, ax);
}

namespace {

// matmul with out_sharding given (a spec of the result's rank) or not.
Tensor matmul_typed(const Tensor& a, const Tensor& b, const PartitionSpec* out_sharding) {
  auto trace = compiler::trace_of("matmul", {&a, &b});
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw InvalidArgument(fmt::format("matmul: operands must have rank 1 or more, not {} and {}",
                                      compiler::type_text(a.dtype(), a.shape()),
                                      compiler::type_text(b.dtype(), b.shape())));
  }
  const Tensor x = a.ndim() == 1 ? expand_dims(a, 0) : a;
  const Tensor y = b.ndim() == 1 ? expand_dims(b, 1) : b;
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  const int64_t m = xs[xs.size() - 2], k = xs.back(), k2 = ys[ys.size() - 2], n = ys.back();
  if (k != k2) {
    throw InvalidArgument(fmt::format("matmul: contracting dimensions differ: {} @ {} ({} vs {})",
                                      compiler::type_text(a.dtype(), a.shape()),
                                      compiler::type_text(b.dtype(), b.shape()), k, k2));
  }
  const Shape batch = compiler::broadcast_shapes("matmul", Shape(xs.begin(), xs.end() - 2),
                                                 Shape(ys.begin(), ys.end() - 2));
  const DType dtype = compiler::promote(a.dtype(), b.dtype());
  // Half types contract in float32 and round once, after any cross-device sum (numpy.h).
  const DType compute = is_half_dtype(dtype) ? DType::kFloat32 : dtype;
  auto operand = [&](const Tensor& t, int64_t r, int64_t c) {
    Shape s = batch;
    s.push_back(r);
    s.push_back(c);
    // In the result's dtype first, as JAX converts it (a uint32 beyond float16's range is inf
    // there), then widened to the one it contracts in.
    const Tensor promoted = t.dtype() == dtype ? t : lax::convert_element_type(t, dtype);
    return broadcast_to(lax::convert_element_type(promoted, compute), s);
  };
  const Tensor lhs = operand(x, m, k), rhs = operand(y, k, n);
  std::optional<PartitionSpec> typed;
  if (out_sharding != nullptr) {
    // Given for the result, whose vector operands' added dimensions are whole.
    const size_t rank = batch.size() + (a.ndim() > 1 ? 1 : 0) + (b.ndim() > 1 ? 1 : 0);
    std::vector<AxisEntry> entries = compiler::type_entries(
        {DType::kFloat32, Shape(rank),
         internal::out_sharding_spec(*trace, "matmul", *out_sharding, rank)});
    if (a.ndim() == 1) entries.insert(entries.end() - (b.ndim() > 1 ? 1 : 0), AxisEntry());
    if (b.ndim() == 1) entries.emplace_back();
    typed = compiler::canonical_spec(std::move(entries));
  }
  Tensor out = lax::convert_element_type(lax::matmul(lhs, rhs, batch.size(), typed), dtype);
  if (a.ndim() == 1) out = squeeze(out, {-2});
  if (b.ndim() == 1) out = squeeze(out, {-1});
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_typed(a, b, nullptr); }
Tensor matmul(const Tensor& a, const Tensor& b, const PartitionSpec& out_sharding) {
  return matmul_typed(a, b, &out_sharding);
}

namespace {

void check_dot_ranks(const Tensor& a, const Tensor& b) {
  if (a.ndim() > 2 || b.ndim() > 2) {
    throw InvalidArgument(fmt::format("dot: operands of rank above 2 ({} and {}): use matmul",
                                      compiler::type_text(a.dtype(), a.shape()),
                                      compiler::type_text(b.dtype(), b.shape())));
  }
}

}  // namespace

namespace {

// jnp.dot beyond rank 2 as einsum subscripts: a's last axis against b's second-to-last (its
// only one for a vector); the result a's other axes, then b's.
std::string dot_subscripts(int64_t na, int64_t nb) {
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  if (na + nb - 1 > static_cast<int64_t>(letters.size())) {
    throw InvalidArgument(
        fmt::format("dot: operands of rank {} and {} have more axes than "
                    "einsum has letters (26)",
                    na, nb));
  }
  const std::string lhs = letters.substr(0, static_cast<size_t>(na));
  const char k = lhs.back();
  std::string rhs = letters.substr(static_cast<size_t>(na), static_cast<size_t>(nb - 1));
  rhs.insert(nb == 1 ? rhs.end() : rhs.end() - 1, k);
  std::string out = lhs.substr(0, lhs.size() - 1);
  for (char c : rhs) {
    if (c != k) out += c;
  }
  return lhs + "," + rhs + "->" + out;
}

}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  if (a.ndim() <= 2 && b.ndim() <= 2) return matmul(a, b);
  return einsum(dot_subscripts(a.ndim(), b.ndim()), a, b);
}
Tensor dot(const Tensor& a, const Tensor& b, const PartitionSpec& out_sharding) {
  check_dot_ranks(a, b);
  return matmul(a, b, out_sharding);
}

namespace {

Tensor full_typed(const Shape& shape, Scalar value, DType dtype,
                  const PartitionSpec* out_sharding) {
  auto trace = compiler::Trace::current("full");
  for (int64_t d : shape) {
    if (d < 0)
      throw InvalidArgument(
          fmt::format("full: negative dimension in ({})", fmt::join(shape, ", ")));
  }
  ValueType type{dtype, shape};
  if (out_sharding != nullptr) {
    type.spec = internal::out_sharding_spec(*trace, "full", *out_sharding, shape.size());
  }
  const bool wide = dtype == DType::kInt64 || dtype == DType::kUInt64;
  if (wide && !compiler::exact_in_double(value)) {  // every bit of the integer: a constant
    const Tensor one = compiler::scalar_tensor(trace, value, dtype);
    return compiler::retyped(lax::broadcast(one, shape), type.spec);
  }
  return lax::full(trace, std::move(type), value.value);
}

Tensor arange_typed(int64_t stop, DType dtype, const PartitionSpec* out_sharding) {
  auto trace = compiler::Trace::current("arange");
  ValueType type{dtype, {std::max<int64_t>(stop, 0)}};
  if (out_sharding != nullptr)
    type.spec = internal::out_sharding_spec(*trace, "arange", *out_sharding, 1);
  return lax::iota(trace, std::move(type));
}

}  // namespace

Tensor full(const Shape& shape, Scalar value, DType dtype) {
  return full_typed(shape, value, dtype, nullptr);
}
Tensor full(const Shape& shape, Scalar value, DType dtype, const PartitionSpec& out_sharding) {
  return full_typed(shape, value, dtype, &out_sharding);
}
Tensor zeros(const Shape& shape, DType dtype) { return full(shape, Scalar(0), dtype); }
Tensor zeros(const Shape& shape, DType dtype, const PartitionSpec& out_sharding) {
  return full(shape, Scalar(0), dtype, out_sharding);
}
Tensor zeros_like(const Tensor& a) {
  compiler::trace_of("zeros_like", {&a});
  return lax::full_like(a, 0);
}
Tensor ones(const Shape& shape, DType dtype) { return full(shape, Scalar(1), dtype); }
Tensor ones(const Shape& shape, DType dtype, const PartitionSpec& out_sharding) {
  return full(shape, Scalar(1), dtype, out_sharding);
}

Tensor arange(int64_t stop, DType dtype) { return arange_typed(stop, dtype, nullptr); }
Tensor arange(int64_t stop, DType dtype, const PartitionSpec& out_sharding) {
  return arange_typed(stop, dtype, &out_sharding);
}

Tensor asarray(const HostArray& value) {
  auto trace = compiler::Trace::current("asarray");
  return lax::constant(trace, value);
}

Tensor softmax(const Tensor& a, int axis) { return softmax(a, AxisList{axis}); }

Tensor softmax(const Tensor& a, const AxisList& axes) {
  Tensor x = astype(a, compiler::floating_of(a.dtype()));
  if (x.size() == 0) return x;  // nothing to normalise (the maximum of nothing has no value)
  const Tensor shifted = x - spmd::lax::stop_gradient(max(x, axes, true));  // as jax.nn's
  const Tensor e = exp(shifted);
  return e / sum(e, axes, true);
}

Tensor logsumexp(const Tensor& a, const AxisList& axes, bool keepdims) {
  const Tensor x = astype(a, compiler::floating_of(a.dtype()));
  if (reduced_count("logsumexp", x, axes) == 0) {  // log of an empty sum: -inf, as JAX's
    return lax::full_like(sum(x, axes, keepdims), -std::numeric_limits<double>::infinity());
  }
  const Tensor m = max(x, axes, true);
  // Shift by the maximum where it is finite, by 0 where it is ±inf (x - inf would be NaN) or
  // NaN, as jax.scipy.special.logsumexp does; a constant to differentiation.
  const Tensor finite = equal(m - m, zeros({}, m.dtype()));
  const Tensor safe = spmd::lax::stop_gradient(where(finite, m, zeros({}, m.dtype())));
  const Tensor out = log(sum(exp(x - safe), axes, true)) + safe;
  return keepdims ? out : squeeze(out, axes.empty() ? AxisList{} : axes);
}

}  // namespace spmd::numpy
