// An element-wise chain (chain.h) as a program one element at a time: the body of the CUDA
// backend's chain kernel (cuda/chain_kernel.cu), written once for the host and the GPU so that
// the CPU tests (tests/kernels/scalar_ops_test.cc) run, element for element, what the GPU runs.
//
// make_scalar_chain() checks the steps on the host and fixes each input's dtype; run_prologue()
// computes, once a thread, the steps that read only scalars (jit's fusion puts a scalar
// computation such as Adam's bias correction into the chain that reads it: jit/fuse.h), and
// run_element() then computes one element through the other steps in scalar_ops.h's
// arithmetic, each step's result rounded to its dtype (a half type, an integer's width) as that
// step's own kernel would store it. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/chain.h"
#include "kernels/scalar_ops.h"

namespace spmd::kernels {

// The most steps and inputs one program takes (a GPU launch carries it as its parameters), and
// the most prologue values the per-element steps read (a thread keeps them in registers).
constexpr int kMaxScalarChainSteps = kMaxChainSteps;
constexpr int kMaxScalarChainInputs = kMaxChainInputs;
constexpr int kMaxHoistedValues = 8;

// The steps are in two lists, one after the other in `step` (so that the launch's parameters are
// no larger than a chain without a prologue):
// - step[0, steps): the steps computed per element, the chain's last step last. Their operands:
//   an input (0 ≤ arg < inputs), a prologue value (arg = inputs + h: prologue step
//   hoisted_from[h]'s result), or an earlier step of this list (chain_result(k)).
// - step[steps, steps + prologue): the prologue, steps that read only scalar inputs (one
//   element) and earlier prologue steps, computed once a thread. Their operands: an input
//   (arg ≥ 0) or an earlier prologue step (chain_result(k), k counted from the prologue's first).
struct ScalarChain {
  int32_t steps = 0;
  int32_t inputs = 0;
  int32_t prologue = 0;
  int32_t hoisted = 0;
  ChainStep step[kMaxScalarChainSteps];
  int8_t hoisted_from[kMaxHoistedValues];
  const std::byte* input[kMaxScalarChainInputs];
  int64_t input_elements[kMaxScalarChainInputs];  // n or 1
  DType input_dtype[kMaxScalarChainInputs];
  std::byte* out = nullptr;
  int64_t n = 0;
};
// A kernel's parameters are at most 4 KB on every CUDA version spmd builds for.
static_assert(sizeof(ScalarChain) <= 4096, "a chain must fit in a CUDA launch's parameters");

// The prologue's values that the per-element steps read, as run_prologue() leaves them.
struct HoistedValues {
  scalar::Slot value[kMaxHoistedValues];
};

// The program for run_chain(steps, inputs, out, n) (chain.h). Where n > 1, the steps before the
// last that read only scalar inputs and each other go to the prologue, if the other steps read
// at most kMaxHoistedValues of their values (else none does). Throws InvalidArgument for a step
// that reads a later step or a missing input, an operation elementwise.h does not define on its
// dtype, uint64 (scalar_ops.h does not compute in it), or more steps or inputs than the limits.
ScalarChain make_scalar_chain(std::span<const ChainStep> steps, std::span<const Input> inputs,
                              std::byte* out, int64_t n);

// chain.h's arity(), for device code too.
SPMD_HOST_DEVICE constexpr int operand_count(ChainStep::Kind kind) {
  return kind == ChainStep::Kind::kBinary                                            ? 2
         : kind == ChainStep::Kind::kSelect || kind == ChainStep::Kind::kMultiplyAdd ? 3
                                                                                     : 1;
}

// A kMultiplyAdd step (float32 or float64, which check_and_type asks for): a × b + c rounded
// once, the signs its fn flags flipped first, as the CPU's float_multiply_add computes it.
SPMD_HOST_DEVICE inline scalar::Slot multiply_add(const ChainStep& s, scalar::Slot a,
                                                  scalar::Slot b, scalar::Slot c) {
  const bool product = (s.fn & kNegateProduct) != 0, addend = (s.fn & kNegateAddend) != 0;
  if (s.dtype == DType::kFloat64) {
    return scalar::make_double(fma(product ? -a.d : a.d, b.d, addend ? -c.d : c.d));
  }
  return scalar::make_float(fmaf(product ? -a.f : a.f, b.f, addend ? -c.f : c.f));
}

// nvcc's device pass compiles apply_step once, as a called function. Inlined, each of the chain
// kernels' unrolled steps held a copy of every operation on every dtype: 19 copies in
// cuda/chain_kernel.cu, whose compile took 111 s (80 of them ptxas) against 20 s now. A step's
// operation is chosen at run time either way; the call adds its cost and some spills around it
// (ptxas -v for short_chain_kernel<8>: 768 bytes of spill loads in its code against 176). These
// general kernels run programs of integers, comparisons, selects and mixed dtypes; the uniform
// floating-point ones (cuda/chain_uniform.cuh) call it only in their prologue.
#if defined(__CUDA_ARCH__)
#define SPMD_STEP_FUNCTION __noinline__
#else
#define SPMD_STEP_FUNCTION
#endif

// Step s on its operands' values (a select's: the condition, then its two choices), its result
// rounded to its dtype (a half type, an integer's width) as the step's own kernel would store it.
SPMD_HOST_DEVICE SPMD_STEP_FUNCTION inline scalar::Slot apply_step(const ChainStep& s,
                                                                   scalar::Slot a, scalar::Slot b,
                                                                   scalar::Slot c,
                                                                   bool* divided_by_zero) {
  scalar::Slot r;
  switch (s.kind) {
    case ChainStep::Kind::kUnary:
      r = scalar::unary(static_cast<Unary>(s.fn), s.dtype, a);
      break;
    case ChainStep::Kind::kBinary:
      r = scalar::binary(static_cast<Binary>(s.fn), s.dtype, a, b, divided_by_zero);
      break;
    case ChainStep::Kind::kSelect:
      r = a.b ? b : c;
      break;
    case ChainStep::Kind::kMultiplyAdd:
      r = multiply_add(s, a, b, c);
      break;
    default:  // kConvert
      r = scalar::convert(s.dtype, s.result, a);
      break;
  }
  if (scalar::class_of(s.result) == scalar::Class::kInt || scalar::is_half(s.result)) {
    r = scalar::round_to(s.result, r);
  }
  return r;
}

// Prologue value h (0 ≤ h < kMaxHoistedValues), picked by comparing indices rather than by a
// computed address, which on a GPU would put the values in local memory.
SPMD_HOST_DEVICE inline scalar::Slot hoisted_value(const HoistedValues& hoisted, int32_t h) {
  scalar::Slot v = hoisted.value[0];
  SPMD_UNROLL
  for (int i = 1; i < kMaxHoistedValues; ++i) {
    if (i == h) v = hoisted.value[i];
  }
  return v;
}

// One step of element e, its operands read through `result(k)` (step k's value of its list) and
// `hoisted` (the prologue's values; unread for a prologue step).
template <class Result>
SPMD_HOST_DEVICE inline scalar::Slot run_step(const ScalarChain& p, const ChainStep& s, int64_t e,
                                              const Result& result, const HoistedValues& hoisted,
                                              bool* divided_by_zero) {
  const auto operand = [&](int32_t arg) {
    if (arg >= p.inputs) return hoisted_value(hoisted, arg - p.inputs);
    if (arg >= 0) {
      return scalar::load(p.input_dtype[arg], p.input[arg], p.input_elements[arg] == 1 ? 0 : e);
    }
    return result(-1 - arg);
  };
  const int operands = operand_count(s.kind);
  const scalar::Slot a = operand(s.args[0]);
  const scalar::Slot b = operands > 1 ? operand(s.args[1]) : a;
  const scalar::Slot c = operands > 2 ? operand(s.args[2]) : a;
  return apply_step(s, a, b, c, divided_by_zero);
}

// Computes the prologue's steps (once a thread) and keeps the values the per-element steps read;
// an integer division by zero among them stores 0 and sets *divided_by_zero.
SPMD_HOST_DEVICE inline void run_prologue(const ScalarChain& p, HoistedValues& hoisted,
                                          bool* divided_by_zero) {
  scalar::Slot results[kMaxScalarChainSteps];
  const auto result = [&](int32_t j) { return results[j]; };
  for (int32_t k = 0; k < p.prologue; ++k) {
    results[k] = run_step(p, p.step[p.steps + k], 0, result, hoisted, divided_by_zero);
  }
  for (int32_t h = 0; h < p.hoisted; ++h) hoisted.value[h] = results[p.hoisted_from[h]];
}

// Whether every per-element step of `p` is a unary or binary arithmetic step (no comparison,
// select or conversion) of one floating-point dtype, reading inputs and prologue values of that
// dtype: such a program computes in plain float (or double) values, which the CUDA backend runs
// without scalar_ops.h's per-value dtype dispatch (cuda/chain_uniform.cuh). The prologue may
// hold any steps (it runs once a thread, through run_prologue). logistic of a half type, whose
// intermediate roundings are its own, is left to the general path.
inline bool is_uniform_float(const ScalarChain& p) {
  const DType t = p.step[0].dtype;
  if (scalar::class_of(t) != scalar::Class::kFloat &&
      scalar::class_of(t) != scalar::Class::kDouble) {
    return false;
  }
  for (int32_t k = 0; k < p.steps; ++k) {
    const ChainStep& s = p.step[k];
    if (s.dtype != t || s.result != t) return false;
    if (s.kind == ChainStep::Kind::kUnary) {
      if (scalar::is_half(t) && static_cast<Unary>(s.fn) == Unary::kLogistic) return false;
      if (t == DType::kFloat16 && static_cast<Unary>(s.fn) == Unary::kExpm1) return false;
    } else if (s.kind != ChainStep::Kind::kBinary || is_comparison(static_cast<Binary>(s.fn))) {
      return false;
    }
    for (int a = 0; a < operand_count(s.kind); ++a) {
      const int32_t arg = s.args[static_cast<size_t>(a)];
      if (arg >= 0 && arg < p.inputs && p.input_dtype[arg] != t) return false;
    }
  }
  for (int32_t h = 0; h < p.hoisted; ++h) {
    if (p.step[p.steps + p.hoisted_from[h]].result != t) return false;
  }
  return true;
}

// Computes element e (0 ≤ e < p.n) through the per-element steps, `hoisted` the prologue's
// values, and stores it in p.out; an integer division by zero stores 0 and sets
// *divided_by_zero. For a program of at most N per-element steps: the steps' results stay in
// registers (the loop is unrolled and a result is picked by comparing indices, never by a
// computed address, which on a GPU would put them in local memory). N of 8 or less.
template <int N>
SPMD_HOST_DEVICE inline void run_element_short(const ScalarChain& p, int64_t e,
                                               const HoistedValues& hoisted,
                                               bool* divided_by_zero) {
  scalar::Slot results[N];
  const auto result = [&](int32_t j) {
    scalar::Slot v = results[0];
    SPMD_UNROLL
    for (int i = 1; i < N; ++i) {
      if (i == j) v = results[i];
    }
    return v;
  };
  SPMD_UNROLL
  for (int k = 0; k < N; ++k) {
    if (k >= p.steps) break;
    results[k] = run_step(p, p.step[k], e, result, hoisted, divided_by_zero);
  }
  scalar::store(p.step[p.steps - 1].result, p.out, e, result(p.steps - 1));
}

// The same for a program of any length (up to kMaxScalarChainSteps), its results in an array.
SPMD_HOST_DEVICE inline void run_element(const ScalarChain& p, int64_t e,
                                         const HoistedValues& hoisted, bool* divided_by_zero) {
  scalar::Slot results[kMaxScalarChainSteps];
  const auto result = [&](int32_t j) { return results[j]; };
  for (int32_t k = 0; k < p.steps; ++k) {
    results[k] = run_step(p, p.step[k], e, result, hoisted, divided_by_zero);
  }
  scalar::store(p.step[p.steps - 1].result, p.out, e, results[p.steps - 1]);
}

}  // namespace spmd::kernels
