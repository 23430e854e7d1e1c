// Element-wise chains with their inputs, for comparing an implementation of chain.h's contract
// with the CPU kernels: every unary and binary operation on every dtype that defines it, over
// special values (signed zeros, subnormals, infinities, NaN, each integer type's extremes);
// every conversion between two dtypes; select; and chains of several steps mixing dtypes and
// scalar operands. tests/kernels/scalar_ops_test.cc runs them through scalar_chain.h on the host
// and tests/gpu/gpu_kernels_test.cc on a GPU; both compare with kernels::run_chain.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/chain.h"
#include "kernels/elementwise.h"
#include "kernels/scalar_ops.h"
#include "spmd/dtype.h"

namespace spmd::test {

using Bytes = std::vector<std::byte>;
using kernels::Binary;
using kernels::ChainStep;
using kernels::Input;
using kernels::Unary;
namespace scalar = kernels::scalar;

inline std::string fmt_name(std::string_view op, DType t) {
  return fmt::format("{}_{}", op, dtype_name(t));
}

struct ChainValue {
  DType dtype;
  Bytes bytes;
  int64_t elements;
  Input input() const { return {bytes.data(), elements}; }
};

struct ChainCase {
  std::string name;
  std::vector<ChainStep> steps;
  std::vector<ChainValue> inputs;
  int64_t n = 0;
  // Whether a platform's transcendental (exp, log, tanh, pow) is on the path: then values may
  // differ in the last places (chain_values_match's tolerance), else bit for bit.
  bool transcendental = false;
  DType out() const { return steps.back().result; }
};

// Every dtype the GPU computes in (all but uint64).
inline std::vector<DType> chain_dtypes() {
  return {DType::kBool,    DType::kInt8,     DType::kInt16,   DType::kInt32,
          DType::kInt64,   DType::kUInt8,    DType::kUInt16,  DType::kUInt32,
          DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
}

// `values` converted (by the CPU kernel, saturating) to `dtype`.
inline ChainValue chain_value(DType dtype, const std::vector<double>& values) {
  const auto n = static_cast<int64_t>(values.size());
  ChainValue v{dtype, Bytes(values.size() * dtype_size(dtype)), n};
  kernels::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(values.data()), n},
                   v.bytes.data(), n);
  return v;
}

inline std::vector<double> special_values(DType dtype) {
  if (dtype == DType::kBool) return {0, 1};
  if (scalar::class_of(dtype) == scalar::Class::kInt) {
    return {0,
            1,
            -1,
            2,
            -2,
            3,
            7,
            -7,
            100,
            -128,
            127,
            255,
            65535,
            2147483647.0,
            -2147483648.0,
            1e10,
            -1e10,
            9.2e18,
            -9.2e18};
  }
  const double inf = INFINITY;
  return {0,    -0.0,  1,      -1,     0.5,   -2.5, 3,     7.25, 100,  -100, 1e-5,
          1e-8, 1e-40, -1e-40, 1e-310, 65504, 1e30, -1e30, inf,  -inf, NAN};
}

inline ChainStep unary_step(Unary op, DType t) {
  return {ChainStep::Kind::kUnary, static_cast<uint8_t>(op), t, t, {kernels::chain_input(0)}};
}

inline ChainStep binary_step(Binary op, DType t, int32_t a, int32_t b) {
  return {ChainStep::Kind::kBinary,
          static_cast<uint8_t>(op),
          t,
          kernels::is_comparison(op) ? DType::kBool : t,
          {a, b}};
}

// The functions whose CPU kernels are XLA's own float32 approximations (xla_math.h), where the
// scalar arithmetic calls the C library's.
inline bool is_transcendental(Unary op) {
  return op == Unary::kExp || op == Unary::kLog || op == Unary::kTanh || op == Unary::kLogistic ||
         op == Unary::kErf || op == Unary::kErfc || op == Unary::kLgamma || op == Unary::kDigamma ||
         op == Unary::kErfInv;
}

// The functions beyond those that a GPU computes with CUDA's libm (libdevice, which XLA:GPU
// calls too) where the CPU kernels follow XLA:CPU's own approximations: the two agree within a
// few units in the last place, not bit for bit. The H100 run of session 43 measured 1 or 2 ulps
// in float32 and float64.
inline bool gpu_libm_differs(Unary op) {
  return is_transcendental(op) || op == Unary::kSin || op == Unary::kCos || op == Unary::kTan ||
         op == Unary::kLog1p || op == Unary::kExpm1 || op == Unary::kErf || op == Unary::kErfc ||
         op == Unary::kCbrt;
}

// One unary operation over the special values of every dtype that defines it.
inline std::vector<ChainCase> unary_cases() {
  std::vector<ChainCase> cases;
  for (DType t : chain_dtypes()) {
    for (int op = 0; op <= static_cast<int>(kernels::kLastUnary); ++op) {
      const auto u = static_cast<Unary>(op);
      if (!scalar::defined(u, t)) continue;
      ChainValue x = chain_value(t, special_values(t));
      const int64_t n = x.elements;
      cases.push_back({fmt_name(kernels::name(u), t),
                       {unary_step(u, t)},
                       {std::move(x)},
                       n,
                       is_transcendental(u)});
    }
  }
  return cases;
}

// unary_cases() as a GPU is held to them: gpu_libm_differs's functions within its tolerance.
inline std::vector<ChainCase> unary_cases_on_gpu() {
  std::vector<ChainCase> cases = unary_cases();
  for (ChainCase& c : cases)
    c.transcendental |= gpu_libm_differs(static_cast<Unary>(c.steps[0].fn));
  return cases;
}

// One binary operation over every pair of special values (integer division and remainder: no zero
// divisor, which the CPU kernel refuses).
inline std::vector<ChainCase> binary_cases() {
  std::vector<ChainCase> cases;
  for (DType t : chain_dtypes()) {
    for (int op = 0; op <= static_cast<int>(Binary::kGe); ++op) {
      const auto b = static_cast<Binary>(op);
      if (!scalar::defined(b, t)) continue;
      const bool int_div =
          (b == Binary::kDiv || b == Binary::kRem) && scalar::class_of(t) == scalar::Class::kInt;
      std::vector<double> xs, ys;
      for (double x : special_values(t)) {
        for (double y : special_values(t)) {
          if (int_div && scalar::saturate(y, t) == 0) continue;
          xs.push_back(x);
          ys.push_back(y);
        }
      }
      const auto n = static_cast<int64_t>(xs.size());
      cases.push_back({fmt_name(kernels::name(b), t),
                       {binary_step(b, t, kernels::chain_input(0), kernels::chain_input(1))},
                       {chain_value(t, xs), chain_value(t, ys)},
                       n,
                       // (a GPU's pow and atan2 are CUDA's, a few ulps from the C library's)
                       (b == Binary::kPow || b == Binary::kAtan2) &&
                           scalar::class_of(t) != scalar::Class::kInt});
    }
  }
  return cases;
}

// Every conversion between two dtypes, over the source's special values.
inline std::vector<ChainCase> convert_cases() {
  std::vector<ChainCase> cases;
  for (DType from : chain_dtypes()) {
    for (DType to : chain_dtypes()) {
      ChainValue x = chain_value(from, special_values(from));
      const int64_t n = x.elements;
      cases.push_back({fmt_name("convert", from) + "_to_" + std::string(dtype_name(to)),
                       {{ChainStep::Kind::kConvert, 0, from, to, {kernels::chain_input(0)}}},
                       {std::move(x)},
                       n,
                       false});
    }
  }
  return cases;
}

// Chains of several steps: select on a comparison, mixed dtypes, scalar operands, a long chain.
inline std::vector<ChainCase> mixed_cases() {
  using kernels::chain_input;
  using kernels::chain_result;
  std::vector<ChainCase> cases;
  std::vector<double> a, b;
  for (int i = 0; i < 1000; ++i) {
    a.push_back(std::sin(i * 0.37) * 50);
    b.push_back(std::cos(i * 0.11) * 50);
  }
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kFloat64}) {
    // where(a < b, a * b, a - 3): the scalar 3 as a one-element input.
    cases.push_back(
        {fmt_name("where_a_lt_b", t),
         {binary_step(Binary::kLt, t, chain_input(0), chain_input(1)),
          binary_step(Binary::kMul, t, chain_input(0), chain_input(1)),
          binary_step(Binary::kSub, t, chain_input(0), chain_input(2)),
          {ChainStep::Kind::kSelect, 0, t, t, {chain_result(0), chain_result(1), chain_result(2)}}},
         {chain_value(t, a), chain_value(t, b), chain_value(t, {3})},
         1000,
         false});
  }
  // int32 → float32 → * 0.1 → bfloat16 → max with itself negated → float32: every class.
  cases.push_back(
      {"mixed_int32_float32_bfloat16",
       {{ChainStep::Kind::kConvert, 0, DType::kInt32, DType::kFloat32, {chain_input(0)}},
        binary_step(Binary::kMul, DType::kFloat32, chain_result(0), chain_input(1)),
        {ChainStep::Kind::kConvert, 0, DType::kFloat32, DType::kBFloat16, {chain_result(1)}},
        unary_step(Unary::kNeg, DType::kBFloat16),
        binary_step(Binary::kMax, DType::kBFloat16, chain_result(2), chain_result(3)),
        {ChainStep::Kind::kConvert, 0, DType::kBFloat16, DType::kFloat32, {chain_result(4)}}},
       {chain_value(DType::kInt32, a), chain_value(DType::kFloat32, {0.1})},
       1000,
       false});
  cases.back().steps[3].args = {chain_result(2)};
  // Eight steps of one float dtype (the CUDA backend's uniform path), a scalar operand, and a
  // length that leaves a partial tile: abs(-(a * b) + 3), its sqrt, max with b, - 3, * a.
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat64}) {
    ChainCase c{fmt_name("eight_uniform_steps", t),
                {},
                {chain_value(t, a), chain_value(t, b), chain_value(t, {3})},
                1000,
                false};
    c.steps = {binary_step(Binary::kMul, t, chain_input(0), chain_input(1)),
               unary_step(Unary::kNeg, t),
               binary_step(Binary::kAdd, t, chain_result(1), chain_input(2)),
               unary_step(Unary::kAbs, t),
               unary_step(Unary::kSqrt, t),
               binary_step(Binary::kMax, t, chain_result(4), chain_input(1)),
               binary_step(Binary::kSub, t, chain_result(5), chain_input(2)),
               binary_step(Binary::kMul, t, chain_result(6), chain_input(0))};
    c.steps[1].args = {chain_result(0)};
    c.steps[3].args = {chain_result(2)};
    c.steps[4].args = {chain_result(3)};
    cases.push_back(std::move(c));
  }
  // Adam's bias correction inside its update, -(m / (1 - b^float(t))), as jit fuses it: the
  // steps that read only scalars form the GPU kernel's prologue (scalar_chain.h), run once a
  // thread, and the rest reads their value.
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    ChainCase c{fmt_name("adam_bias_correction", t),
                {},
                {chain_value(t, a), chain_value(DType::kInt32, {7}), chain_value(t, {0.999}),
                 chain_value(t, {1})},
                1000,
                true};  // pow
    c.steps = {{ChainStep::Kind::kConvert, 0, DType::kInt32, t, {chain_input(1)}},
               binary_step(Binary::kPow, t, chain_input(2), chain_result(0)),
               binary_step(Binary::kSub, t, chain_input(3), chain_result(1)),
               binary_step(Binary::kDiv, t, chain_input(0), chain_result(2)),
               unary_step(Unary::kNeg, t)};
    c.steps[4].args = {chain_result(3)};
    cases.push_back(std::move(c));
  }
  // Nine scalar values read per element, more than a thread keeps (kMaxHoistedValues): no
  // prologue, every step per element. x + -1 + -2 + … + -9.
  ChainCase nine{"nine_hoisted_values", {}, {chain_value(DType::kFloat32, a)}, 1000, false};
  for (int k = 0; k < 9; ++k) {
    nine.inputs.push_back(chain_value(DType::kFloat32, {k + 1.0}));
    nine.steps.push_back(unary_step(Unary::kNeg, DType::kFloat32));
    nine.steps.back().args = {chain_input(k + 1)};
  }
  for (int k = 0; k < 9; ++k) {
    const int32_t x = k == 0 ? chain_input(0) : chain_result(8 + k);
    nine.steps.push_back(binary_step(Binary::kAdd, DType::kFloat32, x, chain_result(k)));
  }
  cases.push_back(std::move(nine));
  // 32 steps, the most one program takes: x + 1, then * 1.5, … alternately.
  ChainCase long_chain{"thirty_two_steps",
                       {},
                       {chain_value(DType::kFloat32, a), chain_value(DType::kFloat32, {1.0}),
                        chain_value(DType::kFloat32, {1.5})},
                       1000,
                       false};
  for (int k = 0; k < 32; ++k) {
    const int32_t x = k == 0 ? chain_input(0) : chain_result(k - 1);
    long_chain.steps.push_back(binary_step(k % 2 ? Binary::kMul : Binary::kAdd, DType::kFloat32, x,
                                           chain_input(1 + k % 2)));
  }
  cases.push_back(std::move(long_chain));
  return cases;
}

// A fused multiply-add (jit's contraction of a product and the sum reading it) of each form
// (the product's sign, the addend's, both, neither flipped) on float32 and float64: over every
// triple of special values, then 997 triples of ordinary values, where the product rounded first
// often gives another sum; and with a scalar product operand and a scalar addend.
inline std::vector<ChainCase> multiply_add_cases() {
  std::vector<ChainCase> cases;
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    std::vector<double> xs, ys, zs;
    const std::vector<double> special = special_values(t);
    for (double x : special) {
      for (double y : special) {
        for (double z : special) {
          xs.push_back(x);
          ys.push_back(y);
          zs.push_back(z);
        }
      }
    }
    uint64_t state = 12345;  // a fixed linear congruential sequence, in [-4, 4)
    const auto next = [&] {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(state >> 11) * 0x1.0p-53 * 8 - 4;
    };
    for (int i = 0; i < 997; ++i) {
      xs.push_back(next());
      ys.push_back(next());
      zs.push_back(next());
    }
    const auto n = static_cast<int64_t>(xs.size());
    for (uint8_t form = 0; form < 4; ++form) {
      const ChainStep fma{
          ChainStep::Kind::kMultiplyAdd,
          form,
          t,
          t,
          {kernels::chain_input(0), kernels::chain_input(1), kernels::chain_input(2)}};
      const std::string name = fmt_name(fmt::format("multiply_add form {}", form), t);
      cases.push_back(
          {name, {fma}, {chain_value(t, xs), chain_value(t, ys), chain_value(t, zs)}, n});
      cases.push_back({name + " of a scalar factor and addend",
                       {fma},
                       {chain_value(t, xs), chain_value(t, {1.0 / 3}), chain_value(t, {-0.1})},
                       n});
    }
  }
  return cases;
}

inline std::vector<ChainCase> all_chain_cases() {
  std::vector<ChainCase> all;
  for (auto* make :
       {&unary_cases, &binary_cases, &convert_cases, &mixed_cases, &multiply_add_cases}) {
    for (ChainCase& c : make()) all.push_back(std::move(c));
  }
  return all;
}

// The CPU kernels' result: the reference.
inline Bytes cpu_chain_result(const ChainCase& c) {
  Bytes out(static_cast<size_t>(c.n) * dtype_size(c.out()));
  std::vector<Input> inputs;
  for (const ChainValue& v : c.inputs) inputs.push_back(v.input());
  kernels::run_chain(c.steps, inputs, out.data(), c.n);
  return out;
}

// Equal bit for bit, any NaN matching any NaN; with `transcendental`, float values may also differ
// by a few units in the last place of their dtype (relative 1e-5 for float32, 1e-13 for float64,
// one unit for the half types), or both be below the smallest normal number (a flushed subnormal).
inline ::testing::AssertionResult chain_values_match(const ChainCase& c, const Bytes& got,
                                                     const Bytes& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  const DType t = c.out();
  const size_t size = dtype_size(t);
  for (int64_t i = 0; i < c.n; ++i) {
    const std::byte* g = got.data() + i * size;
    const std::byte* w = want.data() + i * size;
    if (std::memcmp(g, w, size) == 0) continue;
    const scalar::Class k = scalar::class_of(t);
    const bool floating = k == scalar::Class::kFloat || k == scalar::Class::kDouble;
    const auto value = [&](const std::byte* p) {
      return k == scalar::Class::kDouble ? scalar::load(t, p, 0).d : scalar::load(t, p, 0).f;
    };
    // A NaN is any NaN: its sign and payload are the platform's (x86 gives -nan for 0 * inf,
    // a GPU its canonical +nan, and negation there need not flip a NaN's sign), as in JAX.
    if (floating && std::isnan(value(g)) && std::isnan(value(w))) continue;
    if (c.transcendental && floating) {
      const double x = value(g);
      const double y = value(w);
      const double relative = t == DType::kFloat64   ? 1e-13
                              : t == DType::kFloat32 ? 1e-5
                              : t == DType::kFloat16 ? 1e-3
                                                     : 8e-3;
      const double tiny = t == DType::kFloat64 ? 2.3e-308 : 1.2e-38;
      if (std::abs(x - y) <= relative * std::max(std::abs(x), std::abs(y))) continue;
      if (std::abs(x) < tiny && std::abs(y) < tiny) continue;
    }
    const auto show = [&](const std::byte* p) {
      const scalar::Slot s = scalar::load(t, p, 0);
      switch (scalar::class_of(t)) {
        case scalar::Class::kBool:
          return std::to_string(s.b);
        case scalar::Class::kInt:
          return std::to_string(s.i);
        case scalar::Class::kFloat:
          return fmt::format("{}", s.f);
        default:
          return fmt::format("{}", s.d);
      }
    };
    return ::testing::AssertionFailure() << c.name << ": element " << i << " is " << show(g)
                                         << ", the CPU kernels give " << show(w);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace spmd::test
