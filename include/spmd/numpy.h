// spmd::numpy — NumPy's functions on traced Tensors (jax.numpy; examples write
// `namespace jnp = spmd::numpy;`). Each records one or a few operations of the program jit
// compiles (jit.h); nothing runs until the jitted function is called.
//
// Broadcasting and dtypes follow jax.numpy:
// - Operands broadcast as NumPy's do (shapes aligned at the right, each dimension equal or 1).
// - Two dtypes promote along JAX's type lattice (jnp.promote_types): bool < unsigned/signed
//   integers < floating; a signed and an unsigned integer meet at the signed type wide enough
//   for both (int64 with uint64 gives float64); any integer with a floating type gives that
//   floating type; float16 with bfloat16 gives float32. Scalars are weak (tensor.h). With x64
//   off (JAX's default, config.h) a 64-bit dtype the lattice creates is 32-bit: int32 with
//   uint32 gives int32.
// - true division, exp, log, tanh, sqrt, rsqrt, mean, softmax and logsumexp of integers and
//   bools compute in float32 (int64 and uint64 in float64 under x64); sum of bool and of integers
//   narrower than 32 bits gives int32 (uint32 for unsigned), as jnp.sum does.
// - float16 and bfloat16 compute in float32 and round once per operation.
//
// Every function checks its operands when it is traced and throws InvalidArgument naming the
// function, the shapes and the dtypes: shapes that do not broadcast, a contraction over unequal
// sizes, an axis out of range, a reshape to another size, an operation a dtype lacks (negative
// or arithmetic on bool beyond NumPy's, exp of nothing floating…).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/host_array.h"
#include "spmd/tensor.h"

namespace spmd::numpy {

// Axes: negative counts from the end; an empty list on a reduction means every axis.
using AxisList = std::vector<int>;

// Element-wise arithmetic (binary ones broadcast and promote).
Tensor add(const Tensor& a, const Tensor& b);
Tensor subtract(const Tensor& a, const Tensor& b);
Tensor multiply(const Tensor& a, const Tensor& b);
Tensor divide(const Tensor& a, const Tensor& b);  // true division
// power is numeric, as JAX's: a bool operand is the integer 0 or 1 (of the other operand's
// dtype, or the default integer: power(bool, bool) is int32).
Tensor power(const Tensor& a, const Tensor& b);
Tensor power(const Tensor& a, Scalar b);
Tensor power(Scalar a, const Tensor& b);  // a weak base: 2 ** x
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, Scalar b);
Tensor minimum(const Tensor& a, Scalar b);
Tensor negative(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor logistic(const Tensor& a);  // 1 / (1 + exp(-a)): lax.logistic, jax.nn.sigmoid
// sin, tan, cos, erf and erfc as XLA's CPU backend computes them, with the C library's; log1p and
// the float32 expm1 with XLA's own formulas (kernels/xla_math.h). An integer or bool operand is
// in the default float, as exp's.
Tensor sin(const Tensor& a);
Tensor tan(const Tensor& a);
// The real cube root (jnp.cbrt): the C library's, as XLA's CPU backend computes it.
Tensor cbrt(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor expm1(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor erfc(const Tensor& a);  // 1 - erf(a), without the cancellation for large a
// jax.lax's lgamma (log|Γ(a)|, jax.scipy.special.gammaln), digamma (ψ(a) = d/da log Γ(a)) and
// erf_inv (the inverse of erf on (-1, 1)): each the program XLA compiles for JAX's
// decomposition, so float32 and the half types are JAX's values bit for bit (float64 within a
// few units in the last place: XLA's float64 log1p is not the C library's). lgamma is +inf at the
// poles 0, -1, -2, …, digamma NaN there; erf_inv is ±inf at ±1 and NaN beyond. Derivatives:
// JAX's for lgamma (digamma) and erf_inv ((√π/2) exp(erf_inv(a)²)); digamma's is its own
// formula's (JAX's is XLA's zeta series: a few units in the last place apart). An integer or bool
// operand is refused, as jax.lax refuses it.
Tensor lgamma(const Tensor& a);
Tensor digamma(const Tensor& a);
Tensor erf_inv(const Tensor& a);
// sinh, cosh, arcsinh, arccosh and arctanh composed of exp, expm1, log, log1p and sqrt as XLA
// expands JAX's (so JAX's values), each with JAX's own derivative (sinh's g · cosh(x), arctanh's
// (1 / (1 + x)) · g / (1 - x), …) rather than its composition's. arctanh is NaN beyond 1 in
// magnitude, arccosh below 1. An integer or bool operand is in the default float.
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor arcsinh(const Tensor& a);
Tensor arccosh(const Tensor& a);
Tensor arctanh(const Tensor& a);
// arctan2 is the C library's atan2 (XLA's CPU backend calls it), a and b promoted to their
// floating dtype; arctan, arcsin and arccos are composed of it as XLA expands JAX's (atan2(x, 1),
// 2·atan2(x, 1 + √((1 - x)(x + 1))), atan2(√((1 - x)(x + 1)), x); XLA's half-type rounding), each
// with JAX's derivative. arcsin and arccos are NaN beyond 1 in magnitude.
Tensor arctan2(const Tensor& a, const Tensor& b);
Tensor arctan(const Tensor& a);
Tensor arcsin(const Tensor& a);
Tensor arccos(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor relu(const Tensor& a);  // maximum(a, 0), jax.nn.relu (a bool as the integer 0 or 1)

// Floor division and its remainders, computed as jax.numpy computes them, so the values (signs
// of zeros, inf and NaN included) are JAX's. Numeric: a bool pair divides as the default integer.
// - floor_divide rounds the quotient toward -inf (a floating one through JAX's float divmod:
//   x // 0.0 is ±inf or NaN). An integer divided by zero throws InvalidArgument when the program
//   runs, where XLA returns -1 without a word.
// - remainder (jnp.mod, Python's %) has the divisor's sign, fmod the dividend's; both take an
//   integer zero divisor as 1, as JAX does (x % 0 is 0), and a floating one gives NaN.
// - divmod is (floor_divide, remainder).
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);
Tensor floor_divide(Scalar a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
Tensor remainder(Scalar a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);
Tensor fmod(Scalar a, const Tensor& b);
std::pair<Tensor, Tensor> divmod(const Tensor& a, const Tensor& b);

// Bitwise operations on integers, logical ones on bools (a floating operand throws DTypeError):
// bitwise_and, bitwise_or, bitwise_xor and invert (jnp.bitwise_not). The shifts are numeric (a
// bool is the integer 0 or 1) and defined on integers: right_shift is arithmetic on signed types
// and logical on unsigned ones, and an amount outside [0, bits) shifts every bit out (0, or -1
// for a negative value shifted right), as XLA's shifts do.
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, Scalar b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, Scalar b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, Scalar b);
Tensor invert(const Tensor& a);
Tensor left_shift(const Tensor& a, const Tensor& b);
Tensor left_shift(const Tensor& a, Scalar b);
Tensor left_shift(Scalar a, const Tensor& b);
Tensor right_shift(const Tensor& a, const Tensor& b);
Tensor right_shift(const Tensor& a, Scalar b);
Tensor right_shift(Scalar a, const Tensor& b);
// The logical operations on any dtype, each operand taken as != 0; bool results.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

// Rounding to integral values, in a's dtype; an integer or bool operand is returned as it is
// (rint gives it as the default float, as jnp.rint). round (jnp.round, jnp.around) rounds half
// to even, to `decimals` places through JAX's rescaling: x * 10^d rounded, then times the
// reciprocal of 10^d, as XLA simplifies the division (half types through float32). Negative
// decimals on integers, and round on bool, throw InvalidArgument.
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
Tensor trunc(const Tensor& a);
Tensor rint(const Tensor& a);
Tensor round(const Tensor& a, int decimals = 0);

// Comparisons (bool results) and selection.
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
// The comparisons with a weak scalar on the right (the scalar takes a's dtype where it can).
Tensor equal(const Tensor& a, Scalar b);
Tensor not_equal(const Tensor& a, Scalar b);
Tensor less(const Tensor& a, Scalar b);
Tensor less_equal(const Tensor& a, Scalar b);
Tensor greater(const Tensor& a, Scalar b);
Tensor greater_equal(const Tensor& a, Scalar b);
// cond ? a : b, broadcast together; a and b promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor astype(const Tensor& a, DType dtype);

// Reductions over `axes` (every axis when empty); keepdims keeps them with size 1.
Tensor sum(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);
// jnp.prod: the dtypes of sum (bool and narrow integers multiply in 32 bits, integers wrap; half
// types multiply in float32 and round once); an empty axis gives 1. Its derivative is JAX's:
// the product of the other elements, exact where some are zero.
Tensor prod(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);
Tensor mean(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);
// jnp.var: the mean squared deviation from the mean over `axes`, divided by n - ddof (NaN
// where that is not positive); integers and bools give float32 (float64 for 64-bit ones under
// x64), half types compute in float32 and round once.
Tensor var(const Tensor& a, const AxisList& axes = {}, double ddof = 0, bool keepdims = false);
Tensor max(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);
Tensor min(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);
// Running sums and products along `axis` (jnp.cumsum, jnp.cumprod; the array flattened when
// absent), in a's dtype (an int8 sum wraps in int8; bool counts in int32). Floats combine in the
// order XLA combines them on CPU, so float32 and float64 results equal JAX's bit for bit;
// float16 and bfloat16 scan in float32 and round each result once. The axis is whole on every
// device (gathered where it is split). cumsum's derivative is JAX's, bit for bit (the running
// sum from the end in XLA's order, lax::reverse_cumsum); cumprod has none.
Tensor cumsum(const Tensor& a, std::optional<int> axis = std::nullopt);
Tensor cumprod(const Tensor& a, std::optional<int> axis = std::nullopt);
// jnp.sort and jnp.argsort: each line along `axis` (the array flattened when absent) sorted
// stably in JAX's order: -0 equals 0, NaN after every number, equal elements in their order.
// argsort gives their int32 positions. descending is jnp's: sort gives the ascending result
// reversed, argsort keeps equal elements in their order. The axis is whole on every device
// (gathered where it is split); sort has a derivative, each value's cotangent going back to the
// place it came from.
Tensor sort(const Tensor& a, std::optional<int> axis = -1, bool descending = false);
Tensor argsort(const Tensor& a, std::optional<int> axis = -1, bool descending = false);
// jnp.searchsorted: for each element of `v`, its int32 insertion index into the ascending rank-1
// `a` (both promoted to one dtype), in JAX's sort order (-0 equals 0, NaN after every number):
// side "left", the first position whose element is not less than it; "right", the first whose
// element is greater. An empty `a` gives zeros. InvalidArgument for `a` of another rank or
// another side. `a` is whole on every device; the result is laid out as `v`.
Tensor searchsorted(const Tensor& a, const Tensor& v, std::string_view side = "left");
// lax.sort_key_val's second result: `values` (keys' shape, any dtype) in the stable ascending
// order of `keys` along `axis`. Differentiable in `values`.
Tensor sort_key_val(const Tensor& keys, const Tensor& values, int axis = -1);
// The index of the first maximum along `axis` (int32); the whole array flattened when absent.
Tensor argmax(const Tensor& a, std::optional<int> axis = std::nullopt);
// The index of the first minimum (a NaN counts as it, as in JAX).
Tensor argmin(const Tensor& a, std::optional<int> axis = std::nullopt);
// Whether every (all) or some (any) element over `axes` is true, or nonzero (NaN counts); bool.
// Over no elements: true and false.
Tensor all(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);
Tensor any(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);

// Predicates: where a is NaN; where it is neither NaN nor infinite (everywhere for integers and
// bools). bool, of a's shape.
Tensor isnan(const Tensor& a);
Tensor isfinite(const Tensor& a);
// jnp.clip: maximum(lo, a), then minimum(hi, that), as JAX composes it (promoted as those are;
// NaN kept; a tie's gradient split as maximum's and minimum's).
Tensor clip(const Tensor& a, const Tensor& lo, const Tensor& hi);
Tensor clip(const Tensor& a, Scalar lo, Scalar hi);

// Contractions. matmul: NumPy's @ (1-D operands promoted and the added dimension removed,
// batch dimensions broadcast); dot: jnp.dot, a product where either operand has rank 0, matmul
// up to rank 2, and beyond it the sum over a's last axis and b's second-to-last (b's only for a
// vector; the out_sharding form takes ranks 1 and 2 only). float16 and bfloat16
// operands contract in float32, and a contraction split over devices sums its partials in
// float32, rounding once at the end: the result does not depend on the split. (JAX on CPU
// rounds each device's partial to the half type before its all-reduce: on 0.10.2, f16
// [2, 4096] @ [4096, 3] split 4 ways along 4096 gives 2044 where one device gives 2045, and
// partials of 8e4 and -8e4 give NaN where the sum is 0. spmd keeps the one-device value.)
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);
// With out_sharding (JAX's out_sharding=, on a mesh with Explicit axes): the result's type is
// `out_sharding` on the jit's mesh, whatever the operands' splits. What to give where JAX's rule
// finds the result's split ambiguous (a contracting dimension split on both sides:
// ShardingTypeError without it). It names Explicit axes only (InvalidArgument otherwise); one
// entry per dimension of the result, at most.
Tensor matmul(const Tensor& a, const Tensor& b, const PartitionSpec& out_sharding);
Tensor dot(const Tensor& a, const Tensor& b, const PartitionSpec& out_sharding);

// Einstein summation over one or two operands, NumPy's notation without ellipses or repeated
// letters within an operand: "ij,jk->ik", "bij,bjk->bik", "ij,kj->ik", "ij->ji", "ij->i", or
// implicit ("ij,jk": the letters that appear once, in alphabetical order). Letters missing from
// the output are summed; the work is one matmul (with batch dimensions) between transposes and
// reshapes, so a sharded operand's splits follow those rules.
Tensor einsum(const std::string& subscripts, const Tensor& a);
Tensor einsum(const std::string& subscripts, const Tensor& a, const Tensor& b);
// With out_sharding, for the output letters in order (as matmul's).
Tensor einsum(const std::string& subscripts, const Tensor& a, const Tensor& b,
              const PartitionSpec& out_sharding);

// Shapes. reshape takes one -1 (inferred); transpose without axes reverses them.
Tensor reshape(const Tensor& a, const Shape& shape);
Tensor transpose(const Tensor& a, const std::vector<int>& axes = {});
Tensor broadcast_to(const Tensor& a, const Shape& shape);
Tensor expand_dims(const Tensor& a, int axis);
// Removes the given axes of size 1 (every axis of size 1 when empty).
Tensor squeeze(const Tensor& a, const AxisList& axes = {});
// a[start[0]:stop[0], …] with static bounds (missing trailing dimensions whole; negative and
// out-of-range bounds clip as Python's slices do).
Tensor slice(const Tensor& a, const std::vector<int64_t>& start, const std::vector<int64_t>& stop);
// Every |step|-th element of `a` along `axis` from its first (0, |step|, …: ceil(n / |step|) of
// them), in reverse order where step is negative: step -1 is jnp.flip along the axis, 2 is
// a[::2] there (a[::-2] is a[n-1::-2], the same elements as this on a sliced to end at n-1). One
// pass, no index array. InvalidArgument for step 0 or an axis outside the rank; negative axes
// count from the end.
Tensor strided(const Tensor& a, int axis, int64_t step);
// The box whose element (i_0, i_1, …) is a's (start[0] + i_0 * step[0], …), `extent` elements
// along each dimension (lax.slice with strides, and lax.rev, at once): steps nonzero, negative
// ones reading backwards from start, every element read inside `a` (InvalidArgument otherwise).
Tensor strided_slice(const Tensor& a, const std::vector<int64_t>& start,
                     const std::vector<int64_t>& step, const Shape& extent);
Tensor concatenate(const std::vector<Tensor>& parts, int axis = 0);
// jnp.take in its default mode, "fill": a's elements at `indices` (any integer dtype) along
// `axis` (a flattened when absent), the result's shape a's with that axis replaced by the
// indices' shape. A negative index counts from the end once; one still outside the axis gives
// the fill value: NaN for floats, the lowest value of a signed integer type, the highest of an
// unsigned one, true. Indices into an empty axis are InvalidArgument, as JAX refuses them (none
// give an empty result). The derivative adds the cotangent back at the indices (a repeated index
// sums them in order; one out of range, filled, contributes nothing), as JAX's scatter-add.
Tensor take(const Tensor& a, const Tensor& indices, std::optional<int> axis = std::nullopt);
// jnp.take in mode "clip" (and what [] reads at an index array): a negative index counts from
// the end once, then every index is clamped into the axis; no fill. A single gather. Indices
// into an empty axis are InvalidArgument, unless there are none (an empty result).
Tensor take_clipped(const Tensor& a, const Tensor& indices, int axis);
// How x.at[indices] meets its values: jnp's .set, .add, .multiply, .min and .max.
enum class IndexUpdate { kSet, kAdd, kMultiply, kMin, kMax };
// x.at[indices].set/add/multiply/min/max(values) for integer `indices` (any shape) into the
// leading axis of `a` (rank >= 1), as JAX's scatter: `values` broadcast to indices' shape + a's
// other dimensions; a and values promote and the updates apply in that dtype, the result
// converted back to a's (an int array added 1.7 truncates, as JAX's). Updates apply in their
// order: at a repeated index set's last stays, add and multiply round step by step, min and max
// are jnp.minimum's and jnp.maximum's (NaN wins); bool takes set, min (and) and max (or), and
// add and multiply of bool are DTypeError, as JAX refuses them. A negative index counts from the
// end once; one still outside the axis is dropped (JAX's default mode), or clamped into it with
// `clip` (mode='clip'). `unique_indices` is the caller's promise that no index repeats (JAX's): the
// derivative of multiply needs it, as JAX's does (InvalidArgument from grad without it).
// Derivatives are JAX's: set's goes to the update that stayed, min's and max's are shared equally
// among the ties.
Tensor update_at(const Tensor& a, const Tensor& indices, const Tensor& values, IndexUpdate how,
                 bool clip = false, bool unique_indices = false);
// update_at(a, indices, values, IndexUpdate::kAdd).
Tensor add_at(const Tensor& a, const Tensor& indices, const Tensor& values);
// The arrays, of one shape, joined along a new axis `axis` of the result.
Tensor stack(const std::vector<Tensor>& parts, int axis = 0);
// transpose exchanging two axes; moving axis `source` to position `destination`, the others in
// their order.
Tensor swapaxes(const Tensor& a, int axis1, int axis2);
Tensor moveaxis(const Tensor& a, int source, int destination);

// Creation (replicated; they take the trace from the thread's jit in progress and throw
// InvalidArgument outside one). With out_sharding (Explicit axes only, as matmul's), the result's
// type: jnp.zeros(shape, out_sharding=P('x')); each device keeps its block.
Tensor zeros(const Shape& shape, DType dtype = DType::kFloat32);
Tensor zeros(const Shape& shape, DType dtype, const PartitionSpec& out_sharding);
// Zeros of a's shape, dtype and type's sharding, laid out as `a` when `a` is a jit input.
Tensor zeros_like(const Tensor& a);
Tensor ones(const Shape& shape, DType dtype = DType::kFloat32);
Tensor ones(const Shape& shape, DType dtype, const PartitionSpec& out_sharding);
Tensor full(const Shape& shape, Scalar value, DType dtype = DType::kFloat32);
Tensor full(const Shape& shape, Scalar value, DType dtype, const PartitionSpec& out_sharding);
Tensor arange(int64_t stop, DType dtype = DType::kInt32);
Tensor arange(int64_t stop, DType dtype, const PartitionSpec& out_sharding);
// A constant captured from C++: its elements become part of the program (and of its fingerprint).
Tensor asarray(const HostArray& value);

// Numerically stable forms (the maximum subtracted first), as jax.nn's.
// softmax over `axes` (every axis when empty); an empty array is returned as it is (in a
// floating dtype); logsumexp over no elements is -inf.
Tensor softmax(const Tensor& a, int axis = -1);
Tensor softmax(const Tensor& a, const AxisList& axes);
Tensor logsumexp(const Tensor& a, const AxisList& axes = {}, bool keepdims = false);

// jnp.promote_types.
DType promote_types(DType a, DType b);

}  // namespace spmd::numpy

namespace spmd::lax {

// a's bits read as `dtype` (jax.lax.bitcast_convert_type): a's shape for a dtype of its width, a
// last dimension of the width ratio added for a narrower one (each element's bytes, little-end
// first), a's last dimension (one element's bytes) dropped for a wider one. InvalidArgument for
// bool to or from another dtype, or a last dimension of the wrong size.
Tensor bitcast_convert_type(const Tensor& a, DType dtype);

}  // namespace spmd::lax
