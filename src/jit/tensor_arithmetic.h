// Tensor's operators (tensor.h) and the rules they follow: NumPy's broadcasting and JAX's type
// promotion (promotion.h: the lattice and weak scalars) over lax's element-wise primitives. They
// belong to the core, as JAX's dtype rules do, so that the operations' derivatives are written
// with `g * x` like the user's code; spmd::numpy's element-wise functions are these rules under
// NumPy's names. Each throws InvalidArgument naming `what` (the user's function) for operands of
// two traces, shapes that do not broadcast, or an operation the dtype lacks.
//
// Open to lib/: spmd::numpy's element-wise functions are built on these rules.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/elementwise.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

class Trace;

// NumPy's broadcast of two shapes; InvalidArgument naming `what` when they do not.
Shape broadcast_shapes(std::string_view what, const Shape& a, const Shape& b);
// `t` broadcast to `shape` for an element-wise operand; a rank-0 value stays as it is (kernels
// take one element for all).
Tensor broadcast_for_elementwise(const Tensor& t, const Shape& shape);
// JAX's _broadcast_arrays: each operand broadcast to `shape` (rank 0 stays) and, on a mesh with
// Explicit axes, resharded to the operands' joint type (each dimension split as whichever operand
// splits it; ShardingTypeError naming `what` where two split it differently), so that an
// operation wanting operands split alike (select) takes them. Operands all of one shape are
// taken as they are, as JAX's are.
std::vector<Tensor> broadcast_arrays(std::string_view what, std::span<const Tensor> operands,
                                     const Shape& shape);
// Whether a double holds `s` exactly (a float, or an integer within +-2^53).
bool exact_in_double(const Scalar& s);
// A rank-0 constant of `dtype` in `trace`: an integer scalar exact to the bit in a 64-bit integer
// dtype, and modulo 2^bits in a narrower one (as JAX converts a weak int).
Tensor scalar_tensor(const std::shared_ptr<Trace>& trace, const Scalar& s, DType dtype);

// OverflowError naming `what` when the integer scalar `s` does not fit the integer type it
// enters beside an operand of dtype `operand` (error.h); floats and bools always fit.
void check_scalar_range(std::string_view what, const Scalar& s, DType operand);
// code(a) computed in `dtype` (a converted first).
Tensor unary(std::string_view what, kernels::Unary code, const Tensor& a, DType dtype);
// a code b with both broadcast together and converted to `operand_dtype`.
Tensor binary(std::string_view what, kernels::Binary code, const Tensor& a, const Tensor& b,
              DType operand_dtype);
// a code b in the dtype the two promote to.
Tensor arithmetic(std::string_view what, kernels::Binary code, const Tensor& a, const Tensor& b);
// a code s (s code a when `scalar_first`), the weak scalar taking a's dtype where it can.
Tensor arithmetic(std::string_view what, kernels::Binary code, const Tensor& a, const Scalar& s,
                  bool scalar_first);
// The operands of an operation built from several primitives (floor_divide, remainder, the
// bitwise ones): converted to the dtype they promote to (the weak scalar taking a's dtype where it
// can; with `numeric`, bool beside bool as the default integer, as jax.numpy's
// promote_args_numeric) and broadcast together (a rank-0 operand stays rank 0). In the scalar
// form the pair is (s, a) when `scalar_first`.
std::pair<Tensor, Tensor> promoted(std::string_view what, const Tensor& a, const Tensor& b,
                                   bool numeric);
std::pair<Tensor, Tensor> promoted(std::string_view what, const Tensor& a, const Scalar& s,
                                   bool scalar_first, bool numeric);
// True division: integers and bools divide in float32.
Tensor divide(const Tensor& a, const Tensor& b);
// InvalidArgument naming `what` when `a` is bool (NumPy refuses subtract, negative, … on bool).
void refuse_bool(std::string_view what, const Tensor& a);

}  // namespace spmd::compiler
