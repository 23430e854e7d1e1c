// scalar_ops.h and scalar_chain.h, the arithmetic the CUDA backend's chain kernel runs, run here
// on the host against the CPU kernels (elementwise.h, chain.h): every operation on every dtype
// over special values, every conversion, select and longer chains (chain_cases.h), bit for bit
// except where a platform's transcendental is on the path. Needs no GPU and no CUDA.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernels/chain_cases.h"
#include "kernels/scalar_chain.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

// The chain through run_element(), and through each run_element_short<N>() it fits, which must
// all write the same bytes (the GPU kernel picks one by the chain's length).
Bytes scalar_result(const ChainCase& c) {
  const size_t bytes = static_cast<size_t>(c.n) * dtype_size(c.out());
  std::vector<Input> inputs;
  for (const ChainValue& v : c.inputs) inputs.push_back(v.input());
  const auto run = [&](auto element) {
    Bytes out(bytes);
    kernels::ScalarChain program = kernels::make_scalar_chain(c.steps, inputs, out.data(), c.n);
    bool divided_by_zero = false;
    kernels::HoistedValues hoisted{};
    kernels::run_prologue(program, hoisted, &divided_by_zero);
    for (int64_t e = 0; e < c.n; ++e) element(program, e, hoisted, &divided_by_zero);
    EXPECT_FALSE(divided_by_zero) << c.name;
    return out;
  };
  Bytes generic = run(&kernels::run_element);
  const size_t steps = c.steps.size();
  if (steps <= 2) {
    EXPECT_EQ(run(&kernels::run_element_short<2>), generic) << c.name;
  }
  if (steps <= 4) {
    EXPECT_EQ(run(&kernels::run_element_short<4>), generic) << c.name;
  }
  if (steps <= 8) {
    EXPECT_EQ(run(&kernels::run_element_short<8>), generic) << c.name;
  }
  return generic;
}

void expect_cases_match(const std::vector<ChainCase>& cases) {
  ASSERT_FALSE(cases.empty());
  for (const ChainCase& c : cases) {
    EXPECT_TRUE(chain_values_match(c, scalar_result(c), cpu_chain_result(c)));
  }
}

TEST(ScalarOps, EveryUnaryOperationOnEveryDtypeIsTheCpuKernels) {
  expect_cases_match(unary_cases());
}

TEST(ScalarOps, EveryBinaryOperationOnEveryPairOfSpecialValuesIsTheCpuKernels) {
  expect_cases_match(binary_cases());
}

TEST(ScalarOps, EveryConversionIsTheCpuKernels) { expect_cases_match(convert_cases()); }

TEST(ScalarOps, EveryFormOfMultiplyAddIsTheCpuKernels) { expect_cases_match(multiply_add_cases()); }

TEST(ScalarOps, SelectMixedDtypesScalarOperandsAndLongChainsAreTheCpuKernels) {
  expect_cases_match(mixed_cases());
}

// The operations scalar_ops.h computes on a dtype are the ones the CPU kernels define on it: a
// GPU refuses, before it launches anything, what a CPU would refuse.
TEST(ScalarOps, DefinedIsWhereTheCpuKernelsDoNotThrow) {
  const std::byte one[8] = {std::byte{1}};
  for (DType t : chain_dtypes()) {
    std::byte out[8];
    for (int op = 0; op <= static_cast<int>(kernels::kLastUnary); ++op) {
      const auto u = static_cast<Unary>(op);
      bool cpu_defined = true;
      try {
        kernels::unary(u, t, {one, 1}, out, 1);
      } catch (const InvalidArgument&) {
        cpu_defined = false;
      }
      EXPECT_EQ(scalar::defined(u, t), cpu_defined) << kernels::name(u) << " on " << dtype_name(t);
    }
    for (int op = 0; op <= static_cast<int>(Binary::kGe); ++op) {
      const auto b = static_cast<Binary>(op);
      bool cpu_defined = true;
      try {
        kernels::binary(b, t, {one, 1}, {one, 1}, out, 1);
      } catch (const InvalidArgument&) {
        cpu_defined = false;
      }
      EXPECT_EQ(scalar::defined(b, t), cpu_defined) << kernels::name(b) << " on " << dtype_name(t);
    }
  }
}

// Which programs the CUDA backend may run as plain floats: one float dtype throughout, arithmetic
// only, inputs of that dtype.
TEST(ScalarOps, UniformFloatProgramsAreArithmeticOfOneFloatDtype) {
  const auto uniform = [](const ChainCase& c) {
    std::vector<Input> inputs;
    for (const ChainValue& v : c.inputs) inputs.push_back(v.input());
    return kernels::is_uniform_float(kernels::make_scalar_chain(c.steps, inputs, nullptr, c.n));
  };
  int yes = 0, no = 0;
  for (const ChainCase& c : mixed_cases()) {
    // Adam's case: a conversion in the prologue, plain float arithmetic after it.
    const bool expected =
        c.name.starts_with("eight_uniform_steps") || c.name.starts_with("thirty_two_steps") ||
        c.name.starts_with("adam_bias_correction") || c.name == "nine_hoisted_values";
    EXPECT_EQ(uniform(c), expected) << c.name;
    (expected ? yes : no) += 1;
  }
  EXPECT_EQ(yes, 8);
  EXPECT_GT(no, 0);
  for (const ChainCase& c : unary_cases()) {
    const DType t = c.steps[0].dtype;
    const bool floating = t == DType::kFloat32 || t == DType::kFloat64 || scalar::is_half(t);
    // XLA rounds each step of a half type's logistic, and of a float16's expm1: those stay on
    // the general path, whose scalar::unary repeats the steps.
    const bool half_steps = (scalar::is_half(t) && c.name.starts_with("logistic")) ||
                            (t == DType::kFloat16 && c.name.starts_with("expm1"));
    EXPECT_EQ(uniform(c), floating && !half_steps) << c.name;
  }
  for (const ChainCase& c : binary_cases()) {
    const DType t = c.steps[0].dtype;
    const bool floating = t == DType::kFloat32 || t == DType::kFloat64 || scalar::is_half(t);
    EXPECT_EQ(uniform(c), floating && !kernels::is_comparison(static_cast<Binary>(c.steps[0].fn)))
        << c.name;
  }
  for (const ChainCase& c : convert_cases()) EXPECT_FALSE(uniform(c)) << c.name;
}

TEST(ScalarOps, AnIntegerDivisionByZeroIsReportedNotComputed) {
  const ChainValue x = chain_value(DType::kInt32, {7, 8});
  const ChainValue y = chain_value(DType::kInt32, {2, 0});
  const ChainStep step = binary_step(Binary::kDiv, DType::kInt32, 0, 1);
  Bytes out(8);
  const Input inputs[] = {x.input(), y.input()};
  const auto program = kernels::make_scalar_chain({&step, 1}, inputs, out.data(), 2);
  bool divided_by_zero = false;
  const kernels::HoistedValues none{};
  kernels::run_element(program, 0, none, &divided_by_zero);
  EXPECT_FALSE(divided_by_zero);
  kernels::run_element(program, 1, none, &divided_by_zero);
  EXPECT_TRUE(divided_by_zero);
  EXPECT_EQ(scalar::load(DType::kInt32, out.data(), 0).i, 3);
}

// Steps that read only scalars go to the prologue, computed once a thread; the per-element steps
// read their values as inputs past the chain's own. The chain's last step stays per element.
TEST(ScalarOps, StepsReadingOnlyScalarsFormThePrologue) {
  for (const ChainCase& c : mixed_cases()) {
    std::vector<Input> inputs;
    for (const ChainValue& v : c.inputs) inputs.push_back(v.input());
    const auto p = kernels::make_scalar_chain(c.steps, inputs, nullptr, c.n);
    if (c.name.starts_with("adam_bias_correction")) {
      EXPECT_EQ(p.prologue, 3) << c.name;  // convert, pow, sub
      EXPECT_EQ(p.hoisted, 1) << c.name;
      ASSERT_EQ(p.steps, 2) << c.name;                   // div, neg
      EXPECT_EQ(p.step[0].args[1], p.inputs) << c.name;  // 1 - b^t, the first hoisted value
      EXPECT_EQ(p.hoisted_from[0], 2) << c.name;
      EXPECT_EQ(kernels::make_scalar_chain(c.steps, inputs, nullptr, 1).prologue, 0) << c.name;
    } else {
      EXPECT_EQ(p.prologue, 0) << c.name;  // nine_hoisted_values: nine are more than fit
      EXPECT_EQ(p.steps, static_cast<int32_t>(c.steps.size())) << c.name;
    }
  }
}

TEST(ScalarOps, AnIntegerDivisionByZeroInThePrologueIsReported) {
  const ChainValue x = chain_value(DType::kInt32, {1, 2});
  const ChainValue seven = chain_value(DType::kInt32, {7});
  const ChainValue zero = chain_value(DType::kInt32, {0});
  const ChainStep steps[] = {binary_step(Binary::kDiv, DType::kInt32, 1, 2),
                             binary_step(Binary::kAdd, DType::kInt32, 0, kernels::chain_result(0))};
  Bytes out(8);
  const Input inputs[] = {x.input(), seven.input(), zero.input()};
  const auto program = kernels::make_scalar_chain(steps, inputs, out.data(), 2);
  ASSERT_EQ(program.prologue, 1);
  bool divided_by_zero = false;
  kernels::HoistedValues hoisted{};
  kernels::run_prologue(program, hoisted, &divided_by_zero);
  EXPECT_TRUE(divided_by_zero);
}

// The lowest value of a signed type over -1 has no quotient in the type; XLA wraps it to itself.
// The CPU kernel's division trapped on it (SIGFPE: the process died), reachable through
// spmd::div of integer Blocks; binary_cases() now compares it with the GPU's arithmetic too.
TEST(ScalarOps, TheLowestIntegerOverMinusOneWrapsInsteadOfKillingTheProcess) {
  for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}) {
    const ChainValue x = chain_value(t, {-9.3e18, 7, -7});
    const ChainValue y = chain_value(t, {-1, -1, 2});
    Bytes out(3 * dtype_size(t));
    kernels::binary(Binary::kDiv, t, x.input(), y.input(), out.data(), 3);
    EXPECT_EQ(scalar::load(t, out.data(), 0).i, scalar::int_min(t)) << dtype_name(t);
    EXPECT_EQ(scalar::load(t, out.data(), 1).i, -7) << dtype_name(t);
    EXPECT_EQ(scalar::load(t, out.data(), 2).i, -3) << dtype_name(t);
  }
}

TEST(ScalarOps, MalformedChainsAreRefusedBeforeAnythingRuns) {
  Bytes out(64);
  const ChainValue x = chain_value(DType::kFloat32, {1, 2});
  const Input inputs[] = {x.input()};
  const auto refused = [&](std::vector<ChainStep> steps, std::span<const Input> in,
                           std::string_view says) {
    try {
      kernels::make_scalar_chain(steps, in, out.data(), 2);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({unary_step(Unary::kNot, DType::kFloat32)}, inputs,
          "applies not, which is not defined on it");
  refused({unary_step(Unary::kNeg, DType::kUInt64)}, inputs, "uint64");
  refused({binary_step(Binary::kAdd, DType::kFloat32, 0, 1)}, inputs, "reads input 1 of 1");
  refused({binary_step(Binary::kAdd, DType::kFloat32, 0, kernels::chain_result(0))}, inputs,
          "reads a step not yet run");
  refused({}, inputs, "0 steps");
  refused(
      std::vector<ChainStep>(kernels::kMaxChainSteps + 1, unary_step(Unary::kNeg, DType::kFloat32)),
      inputs, fmt::format("{} steps", kernels::kMaxChainSteps + 1));
}

}  // namespace
}  // namespace spmd::test
