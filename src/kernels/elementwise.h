// Element-wise kernels over contiguous buffers, vectorised by Eigen 3.4 (Eigen::Array maps),
// except what runs faster as loops the compiler vectorises for the CPU it finds: float
// arithmetic, comparisons and signs (float_arithmetic.h), selects, bool conversions and maxima
// (mask_ops.h), and XLA's transcendentals (xla_math.h and the AVX loops beside it).
//
// Every input holds either `n` elements or one (a scalar, applied to all n): NumPy broadcasting
// of other shapes is done before, by broadcast() (layout.h). Inputs and outputs share the
// dtype, except the comparisons (bool out) and convert(). float16 and bfloat16 compute in
// float32 and round once per call. Which dtypes an operation accepts is spmd::numpy's business
// (it promotes as JAX does); here, a transcendental on an integer type throws InvalidArgument.
// Pure functions; thread-safe.
// Open to tools/: spmd-bench jit runs the kernels beside jit as its baseline.
// Open to lib/: the element-wise functions lax::unary and lax::binary take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spmd/dtype.h"

namespace spmd::kernels {

// kCopy and kStopGradient return their input unchanged, in every dtype (they differ only to
// differentiation: jax.lax's copy_p and stop_gradient). kRelu is maximum(x, 0) as jnp.maximum
// computes it (NaN kept, -0 and subnormals to +0), one op so that jax.nn.relu's derivative (0 at
// 0) can be its own. kLogistic is lax.logistic as XLA's CPU backend expands it, 1 / (exp(-x) + 1)
// (0 at -inf and where the quotient is subnormal, 1 at +inf, NaN kept). kNot is logical on bool
// and bitwise on the integer types (lax.bitwise_not). kFloor, kCeil, kRound and kRoundEven are
// defined on the floating types only: kRound rounds half away from zero (lax.round's default),
// kRoundEven half to even (jnp.round's and jnp.rint's). kSin, kCos, kTan, kLog1p, kExpm1, kErf,
// kErfc and kCbrt are the C library's functions element by element, as XLA's CPU backend calls
// them (its tan is sin/cos; its float32 cbrt is the C library's cbrtf, run under the flushing
// of subnormals as XLA runs it), but for float32 (and the half types, computed in it) where XLA
// has its own: kLog1p, kExpm1, kErf (Eigen's rational interpolant) and kErfc (Cephes' erfcf, as
// JAX's CHLO decomposition writes it) are XLA's formulas (xla_math.h), float16 expm1 rounding
// each step as XLA computes it in that type. kLgamma, kDigamma and kErfInv are jax.lax's lgamma,
// digamma and erf_inv as XLA compiles JAX's decompositions (xla_special.h): float32 and the
// half types JAX's bit for bit, float64 with the C library's log and log1p.
enum class Unary : uint8_t {
  kNeg,
  kExp,
  kLog,
  kTanh,
  kSqrt,
  kRsqrt,
  kAbs,
  kSign,
  kNot,
  kCopy,
  kStopGradient,
  kRelu,
  kLogistic,
  kFloor,
  kCeil,
  kRound,
  kRoundEven,
  kSin,
  kCos,
  kLog1p,
  kExpm1,
  kErf,
  kErfc,
  kTan,
  kCbrt,
  kLgamma,
  kDigamma,
  kErfInv,
};
constexpr Unary kLastUnary = Unary::kErfInv;
// kAnd, kOr and kXor are logical on bool and bitwise on the integer types; not defined on the
// floating types. kRem is XLA's rem: the remainder of truncating division, of the dividend's sign
// (C's fmod on the floating types); on integers the lowest value % -1 is 0. kShiftLeft and
// kShiftRight are defined on the integer types: kShiftRight is arithmetic on signed types and
// logical on unsigned ones (jnp.right_shift's choice), and an amount outside [0, bits) shifts
// every bit out, as XLA's shifts do (0, or -1 for a negative value shifted arithmetically).
// kAtan2 (floating types only) is the C library's atan2(a, b), which XLA's CPU backend calls
// (jnp.arctan2's values on 5,000 pairs were glibc's atan2f bit for bit).
enum class Binary : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kAnd,
  kOr,
  kXor,
  kRem,
  kShiftLeft,
  kShiftRight,
  kAtan2,
  // Comparisons: bool out.
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
};

// "neg", "exp", …; "add", "sub", …, as lower(...).as_text() prints them.
std::string_view name(Unary op);
std::string_view name(Binary op);
constexpr bool is_comparison(Binary op) { return op >= Binary::kEq; }

// One input of an element-wise kernel: `elements` is n or 1 (and `repeat` 1). A chain's input
// (chain.h) may also be a broadcast read in place: element i of the chain reads element
// (i / repeat) % elements, which the chain turns into one of those two forms block by block.
struct Input {
  const std::byte* data;
  int64_t elements;
  int64_t repeat = 1;
};

// out[i] = op(a[i]) over n elements of `dtype`.
void unary(Unary op, DType dtype, Input a, std::byte* out, int64_t n);
// out[i] = a[i] op b[i]; out has `dtype` (bool for a comparison). div of integers truncates
// toward zero; div and rem of integers throw InvalidArgument on a zero divisor, where XLA returns
// a value without a word (spmd::numpy promotes integers to floating point before a true divide,
// and remainder() replaces a zero divisor as jnp.remainder does; Block's div keeps integers).
void binary(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n);
// out[i] = cond[i] ? a[i] : b[i]; cond is bool.
void select(DType dtype, Input cond, Input a, Input b, std::byte* out, int64_t n);
// out[i] = a[i] converted from `from` to `to`: float to integer truncates toward zero and
// saturates as XLA's does (NaN is 0, ±inf and values out of range the type's extremes; NumPy's
// cast leaves these undefined), integer to narrower integer wraps, anything to bool is != 0,
// half types round to nearest even.
void convert(DType from, DType to, Input a, std::byte* out, int64_t n);

// The same kernels with the dtype dispatch done once, for a loop that calls one kernel on many
// small pieces (chain.h). Calling what unary_kernel(t) returns with dtype t is calling unary()
// with it, and so on; with another dtype, the behaviour is undefined.
using UnaryKernel = void (*)(Unary op, DType dtype, Input a, std::byte* out, int64_t n);
using BinaryKernel = void (*)(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n);
using SelectKernel = void (*)(DType dtype, Input cond, Input a, Input b, std::byte* out, int64_t n);
using ConvertKernel = void (*)(DType from, DType to, Input a, std::byte* out, int64_t n);
UnaryKernel unary_kernel(DType dtype);
BinaryKernel binary_kernel(DType dtype);
SelectKernel select_kernel(DType dtype);
ConvertKernel convert_kernel(DType from, DType to);

}  // namespace spmd::kernels
