// The core's tracing API: one function per primitive, each appending one operation of its family
// (ops/) to its operands' trace and returning the result, as jax.lax's functions bind one
// primitive each. The operations' own rules (ops/*.cc: derivatives, batching) and the libraries
// above the core (src/lib: spmd::numpy, spmd::random, spmd::optim) build programs with these and
// with Tensor's operators (tensor_arithmetic.h), never by constructing a family's kinds.
//
// Like lax, and unlike spmd::numpy, nothing here promotes or broadcasts: operands have the dtypes
// and shapes the primitive takes, and axes are already normalised (0 ≤ axis < rank). The
// primitive's result_type checks them when the operation is applied and throws InvalidArgument
// naming the primitive; a library checks the user's arguments first, so the user's errors name
// the user's call. Every operand belongs to one open trace (trace_of).
//
// Open to lib/: the libraries build their programs through these functions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/linalg.h"
#include "kernels/reduce.h"
#include "kernels/scatter.h"
#include "spmd/dtype.h"
#include "spmd/host_array.h"
#include "spmd/partition_spec.h"
#include "spmd/shape.h"
#include "spmd/tensor.h"

namespace spmd::compiler {
class Operation;
class Trace;
struct ValueType;
}  // namespace spmd::compiler

namespace spmd::compiler::lax {

// `operation` applied to `operands` (one or more), appended to their trace: what every builder
// below does, what the families' batching rules use to remake a kind with shifted attributes,
// and what a library uses for a kind it defines and registers itself (the random family).
Tensor bind(std::shared_ptr<const Operation> operation, const std::vector<Tensor>& operands);

// --- element-wise (operands of one dtype, shapes equal or rank 0) ---
// `x` itself when it already has `dtype`.
Tensor convert_element_type(const Tensor& x, DType dtype);
Tensor unary(kernels::Unary fn, const Tensor& x);
// A comparison's result is bool.
Tensor binary(kernels::Binary fn, const Tensor& a, const Tensor& b);
// which ? a : b; `which` is bool.
Tensor select(const Tensor& which, const Tensor& a, const Tensor& b);
// A value with a derivative of its own: `value` (computed from `inputs` by any composition),
// whose cotangents for `inputs` grad takes from `rule(inputs, g)` (one per input, nullopt for
// none) instead of differentiating the composition, as a JAX primitive's own JVP rule gives
// them. `function` names it in the program's text. The rule is traced like user code, so it is
// differentiated again for higher derivatives. With `batchable`, vmap calls it on the batched
// inputs, so it must hold for any leading dimensions (element-wise rules do); without (a rule
// written for one slice, as jax.custom_vjp's bwd), vmap batches the rule itself: it is traced on
// one slice of the inputs and the cotangent, then replayed over all of them, as JAX batches it.
using VjpRule =
    std::function<std::vector<std::optional<Tensor>>(const std::vector<Tensor>&, const Tensor&)>;
Tensor with_vjp(const std::string& function, const std::vector<Tensor>& inputs, const Tensor& value,
                VjpRule rule, bool batchable = true);
// x's bits read as `dtype` (jax.lax.bitcast_convert_type): the same shape for a dtype of x's
// width, a last dimension of the width ratio added for a narrower one, x's last dimension (which
// must hold one element's bytes) dropped for a wider one. InvalidArgument for bool to or from
// another dtype.
Tensor bitcast_convert_type(const Tensor& x, DType dtype);

// --- reductions ---
// Over `axes` (sorted, distinct), which leave the result; `x` itself when there are none. Over
// axes of one element only, a reshape that drops them, as XLA's simplifier makes it.
Tensor reduce(kernels::Reduce fn, const Tensor& x, std::vector<int64_t> axes);
// The index of the first maximum along a non-empty `axis` (int32).
Tensor argmax(const Tensor& x, int axis);
// Running sums and products along `axis`, in x's dtype.
Tensor cumsum(const Tensor& x, int axis);
Tensor cumprod(const Tensor& x, int axis);
// The running sum from the end along `axis` (JAX's reverse cumsum, cumsum's transpose), in the
// order XLA's CPU backend sums it, each addition in x's dtype (a half type rounds at every
// step, as XLA's does): composed of slices and additions, so it is differentiable and batchable.
Tensor reverse_cumsum(const Tensor& x, int axis);

// --- layout (no arithmetic; reshape, broadcast, transpose and slice return `x` itself where
// nothing changes) ---
// The same elements in `shape` (no -1).
Tensor reshape(const Tensor& x, const Shape& shape);
// NumPy's broadcast of `x` to `shape` (aligned at the right).
Tensor broadcast(const Tensor& x, const Shape& shape);
// A dimension of size 1 inserted before dimension `axis` (0 ≤ axis ≤ rank).
Tensor expand_dims(const Tensor& x, int axis);
// Dimension i of the result is dimension perm[i] of `x`.
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm);
// The block of `extent` at `start` (within `x`).
Tensor slice(const Tensor& x, const std::vector<int64_t>& start, const Shape& extent);
// Element (i_0, …) of the result is x's (start[0] + i_0 * step[0], …), for `extent` elements
// per dimension: steps nonzero, negative ones reading backwards (all inside `x`).
Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& start,
                     const std::vector<int64_t>& step, const Shape& extent);
// `parts` (one dtype, equal outside `axis`) end to end along `axis`.
Tensor concatenate(const std::vector<Tensor>& parts, int axis);

// --- contractions ---
// Einstein summation of two operands by letters ("bmk,bkn->bmn"; contraction.h's rules), with
// the result's type spec when given (Explicit axes only, canonical).
Tensor dot(const Tensor& a, const Tensor& b, const std::string& lhs, const std::string& rhs,
           const std::string& out, std::optional<PartitionSpec> out_sharding = std::nullopt);
// NumPy's matmul of operands with `batch` equal leading dimensions: "…mk,…kn->…mn".
Tensor matmul(const Tensor& a, const Tensor& b, size_t batch,
              std::optional<PartitionSpec> out_sharding = std::nullopt);

// --- creation, in `trace` ---
// `value` (converted to type.dtype) everywhere in `type`.
Tensor full(const std::shared_ptr<Trace>& trace, ValueType type, double value);
Tensor full(const std::shared_ptr<Trace>& trace, const Shape& shape, DType dtype, double value);
// `value` everywhere in x's type (its sharding in types included), laid out as `x` when `x` is
// a jit parameter (jnp.zeros_like's behaviour).
Tensor full_like(const Tensor& x, double value);
// 0, 1, 2, … along the one dimension of `type`.
Tensor iota(const std::shared_ptr<Trace>& trace, ValueType type);
// A constant captured from the host; its elements are part of the program.
Tensor constant(const std::shared_ptr<Trace>& trace, const HostArray& value);

// --- ordering ---
// The indices (int32) of the k largest elements of the rank-1 `x`, largest first.
Tensor top_k(const Tensor& x, int64_t k);
// For each query, its insertion index into the ascending rank-1 `sorted` (int32; side 'left':
// the number of elements less than it).
Tensor search_sorted(const Tensor& sorted, const Tensor& queries);
// x's slices along `axis` at `indices` (int32, any shape; out of range clamped), which replace
// that dimension.
Tensor take(const Tensor& x, const Tensor& indices, int axis);
// take, but an index out of range gives slices of `fill` (one element of x's dtype) instead of
// being clamped: jnp.take's default mode in one pass.
Tensor take_filled(const Tensor& x, const Tensor& indices, int axis, const Tensor& fill);
// take's transpose: zeros of `size` along `axis` (float `updates`' shape with the int32
// `indices`' dimensions at `axis` replaced by it), each slice of `updates` added at its index
// (clamped), in order.
Tensor scatter_add(const Tensor& updates, const Tensor& indices, int axis, int64_t size);
// x with each slice of `updates` (x's shape, shape[axis] replaced by the count of the 1-D int32
// `indices`) combined at its index along `axis` in order, those outside the axis dropped
// (ops/scatter.cc, kernels/scatter.h). `unique`: the caller promises no index repeats.
Tensor scatter(kernels::ScatterCombine how, const Tensor& x, const Tensor& indices,
               const Tensor& updates, int axis, bool unique = false);
// The factorization family (ops/linalg.cc) of the matrices in the last two dimensions, float32
// or float64: the lower Cholesky factor; the reduced QR decomposition's Q and R.
Tensor cholesky(const Tensor& a);
Tensor qr_q(const Tensor& a);
Tensor qr_r(const Tensor& a);
// jax.lax.linalg.triangular_solve: x with op(a) x = b (how.left_side) or x op(a) = b, a's lower
// or upper triangle read; a (…, k, k), b (…, m, n) of a's dtype (float32, float64) and batch.
Tensor triangular_solve(const Tensor& a, const Tensor& b, kernels::TriangularSolve how);
// A stable sort of each line along `axis` in JAX's order (kernels/ordering.h: -0 equals 0, NaN
// last), x of an orderable dtype: x sorted; `values` (x's shape, any dtype) in the order of
// `keys`; or x's int32 positions. `descending` as jnp's (the reverse of the ascending order for
// sort and sort_key_val; equal keys kept in their order for argsort). sort and sort_key_val's
// values have a derivative.
Tensor sort(const Tensor& x, int axis, bool descending = false);
Tensor sort_key_val(const Tensor& keys, const Tensor& values, int axis, bool descending = false);
Tensor argsort(const Tensor& x, int axis, bool descending = false);

}  // namespace spmd::compiler::lax
