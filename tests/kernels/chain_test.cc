// kernels::run_chain (kernels/chain.h): a chain run block by block equals its steps run one after
// another over all the elements, whatever the length, dtypes and scalar operands.
#include "kernels/chain.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/chain_cases.h"
#include "kernels/chain_hoist.h"
#include "kernels/float_arithmetic.h"
#include "kernels/register_run.h"
#include "spmd/error.h"

namespace {

using spmd::DType;
using spmd::kernels::Binary;
using spmd::kernels::ChainStep;
using spmd::kernels::Input;
using spmd::kernels::Unary;
using Bytes = std::vector<std::byte>;
using Kind = ChainStep::Kind;

// Operations whose results are exact, so both ways must agree bit for bit.
const std::vector<Binary> kArithmetic = {Binary::kAdd, Binary::kSub, Binary::kMul, Binary::kMax,
                                         Binary::kMin};
const std::vector<Binary> kComparisons = {Binary::kLt, Binary::kGe, Binary::kEq};
const std::vector<Unary> kUnary = {Unary::kNeg, Unary::kAbs, Unary::kSign};

// An input: n elements or one, small integers in `dtype` (exact in every dtype here).
struct Value {
  DType dtype;
  Bytes bytes;
  int64_t elements;
  Input input() const { return {bytes.data(), elements}; }
};

Value make_value(DType dtype, int64_t elements, int seed) {
  std::vector<double> v(static_cast<size_t>(elements));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7 + seed) % 11) - 5;
  Value out{dtype, Bytes(static_cast<size_t>(elements) * spmd::dtype_size(dtype)), elements};
  spmd::kernels::convert(DType::kFloat64, dtype,
                         {reinterpret_cast<const std::byte*>(v.data()), elements}, out.bytes.data(),
                         elements);
  return out;
}

// Each step over all n elements, one after another: the reference.
Bytes step_by_step(const std::vector<ChainStep>& steps, const std::vector<Value>& inputs,
                   int64_t n) {
  std::vector<Bytes> results;
  for (const ChainStep& s : steps) {
    std::vector<Input> in;
    for (int i = 0; i < spmd::kernels::arity(s.kind); ++i) {
      const int32_t arg = s.args[static_cast<size_t>(i)];
      in.push_back(arg >= 0 ? inputs[static_cast<size_t>(arg)].input()
                            : Input{results[static_cast<size_t>(-1 - arg)].data(), n});
    }
    Bytes out(static_cast<size_t>(n) * spmd::dtype_size(s.result));
    switch (s.kind) {
      case Kind::kUnary:
        spmd::kernels::unary(static_cast<Unary>(s.fn), s.dtype, in[0], out.data(), n);
        break;
      case Kind::kBinary:
        spmd::kernels::binary(static_cast<Binary>(s.fn), s.dtype, in[0], in[1], out.data(), n);
        break;
      case Kind::kSelect:
        spmd::kernels::select(s.dtype, in[0], in[1], in[2], out.data(), n);
        break;
      case Kind::kConvert:
        spmd::kernels::convert(s.dtype, s.result, in[0], out.data(), n);
        break;
      case Kind::kMultiplyAdd:
        spmd::kernels::float_multiply_add(s.fn, s.dtype, in[0], in[1], in[2], out.data(), n);
        break;
    }
    results.push_back(std::move(out));
  }
  return results.back();
}

// A random chain over `dtype`: each step reads the latest result of the same dtype, and an
// arithmetic one also a fresh input (n elements or a scalar) or any earlier value of that dtype,
// so values stay live across steps while others' block buffers are reused (chain.cc's plan);
// comparisons feed selects, and some steps convert.
struct RandomChain {
  std::vector<ChainStep> steps;
  std::vector<Value> inputs;
};

int32_t fresh_input(RandomChain& c, DType dtype, int64_t n) {
  const bool scalar = *rc::gen::inRange(0, 4) == 0;
  c.inputs.push_back(make_value(dtype, scalar ? 1 : n, *rc::gen::inRange(0, 11)));
  return spmd::kernels::chain_input(static_cast<int>(c.inputs.size() - 1));
}

RandomChain random_chain(DType dtype, int64_t n) {
  RandomChain c;
  int32_t latest = fresh_input(c, dtype, n);  // a value of `dtype` so far
  std::vector<int32_t> values{latest};        // all of them: a step may read any, however early
  const auto earlier_or_fresh = [&] {
    return *rc::gen::inRange(0, 2) == 0 ? *rc::gen::elementOf(values) : fresh_input(c, dtype, n);
  };
  const int length = *rc::gen::inRange(1, 12);
  for (int k = 0; k < length; ++k) {
    const auto result = [&] {
      return spmd::kernels::chain_result(static_cast<int>(c.steps.size()));
    };
    const bool floating = dtype == DType::kFloat32 || dtype == DType::kFloat64;
    switch (*rc::gen::inRange(0, floating ? 5 : 4)) {
      case 0:
        c.steps.push_back({Kind::kUnary,
                           static_cast<uint8_t>(*rc::gen::elementOf(kUnary)),
                           dtype,
                           dtype,
                           {latest}});
        break;
      case 1:
        c.steps.push_back({Kind::kBinary,
                           static_cast<uint8_t>(*rc::gen::elementOf(kArithmetic)),
                           dtype,
                           dtype,
                           {latest, earlier_or_fresh()}});
        break;
      case 2: {  // a comparison choosing between the latest value and a fresh one
        c.steps.push_back({Kind::kBinary,
                           static_cast<uint8_t>(*rc::gen::elementOf(kComparisons)),
                           dtype,
                           DType::kBool,
                           {latest, fresh_input(c, dtype, n)}});
        const int32_t cond = result() + 1;
        c.steps.push_back(
            {Kind::kSelect, 0, dtype, dtype, {cond, latest, fresh_input(c, dtype, n)}});
        break;
      }
      case 3:  // there and back through another dtype
        c.steps.push_back({Kind::kConvert, 0, dtype, DType::kFloat64, {latest}});
        c.steps.push_back({Kind::kConvert, 0, DType::kFloat64, dtype, {result() + 1}});
        break;
      default:  // a fused multiply-add of any form
        c.steps.push_back({Kind::kMultiplyAdd,
                           static_cast<uint8_t>(*rc::gen::inRange(0, 4)),
                           dtype,
                           dtype,
                           {latest, earlier_or_fresh(), earlier_or_fresh()}});
        break;
    }
    latest = result() + 1;
    values.push_back(latest);
  }
  return c;
}

RC_GTEST_PROP(Chain, BlockByBlockEqualsStepByStep, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kInt32, DType::kFloat16,
                                        DType::kInt8, DType::kFloat64);
  // Lengths within one block and around the block sizes (128 to 2048, by the chain's buffers).
  const int64_t n =
      *rc::gen::oneOf(rc::gen::inRange<int64_t>(0, 70), rc::gen::inRange<int64_t>(500, 1100),
                      rc::gen::inRange<int64_t>(1900, 2300), rc::gen::inRange<int64_t>(4000, 9000));
  const RandomChain c = random_chain(dtype, n);
  std::vector<Input> inputs;
  for (const Value& v : c.inputs) inputs.push_back(v.input());
  Bytes got(static_cast<size_t>(n) * spmd::dtype_size(c.steps.back().result));
  spmd::kernels::run_chain(c.steps, inputs, got.data(), n);
  const Bytes want = step_by_step(c.steps, c.inputs, n);
  RC_ASSERT(std::memcmp(got.data(), want.data(), got.size()) == 0);
}

// A chain of the steps a register run takes (kernels/register_run.h): the four arithmetic
// operations, the maximum and minimum, multiply-adds of every sign form, negation, absolute value
// and the square root, each reading the latest value and an earlier one or a fresh input: special
// values (cycled from a random start), a scalar, a row broadcast read in place (its elements
// again and again) or a column broadcast (each element repeated). The reference reads each
// broadcast written out in full.
struct RunChain {
  std::vector<ChainStep> steps;
  std::vector<Value> stored;  // the chain's inputs as it reads them
  std::vector<Input> inputs;
  std::vector<Value> expanded;  // the same, n elements each (or one), for step_by_step
};

// A number in [low, high), drawn over the whole range from the first case on (RapidCheck's
// inRange draws from a range that grows with the case's size, and its first cases would all
// be scalars, computed once and never run as chains).
int pick(int low, int high) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(low, high));
}

// A special value cycle of `elements` from a random start, read as `repeat` copies of each; the
// reference's copy written out over n.
int32_t run_input(RunChain& c, DType dtype, int64_t n) {
  const std::vector<double> special = spmd::test::special_values(dtype);
  const auto start = static_cast<size_t>(pick(0, 64));
  const int form = pick(0, 6);  // 0: a scalar; 1: a row; 2: a column; else n
  const int64_t elements = form == 0   ? 1
                           : form == 1 ? int64_t{pick(2, 300)}
                           : form == 2 ? (n + 2) / 3
                                       : n;
  const int64_t repeat = form == 2 ? 3 : 1;
  std::vector<double> v(static_cast<size_t>(elements));
  for (size_t i = 0; i < v.size(); ++i) v[i] = special[(i + start) % special.size()];
  std::vector<double> full(static_cast<size_t>(elements == 1 ? 1 : n));
  for (size_t i = 0; i < full.size(); ++i) {
    full[i] = v[(i / static_cast<size_t>(repeat)) % v.size()];
  }
  const spmd::test::ChainValue a = spmd::test::chain_value(dtype, v);
  const spmd::test::ChainValue b = spmd::test::chain_value(dtype, full);
  c.stored.push_back({dtype, a.bytes, a.elements});
  c.expanded.push_back({dtype, b.bytes, b.elements});
  c.inputs.push_back({nullptr, elements, repeat});
  return spmd::kernels::chain_input(static_cast<int>(c.inputs.size() - 1));
}

RunChain run_chain_of(DType dtype, int64_t n) {
  RunChain c;
  int32_t latest = run_input(c, dtype, n);
  std::vector<int32_t> values{latest};
  const auto other = [&] {
    return pick(0, 2) == 0 ? values[static_cast<size_t>(pick(0, static_cast<int>(values.size())))]
                           : run_input(c, dtype, n);
  };
  const std::vector<Binary> ops = {Binary::kAdd, Binary::kSub, Binary::kMul,
                                   Binary::kDiv, Binary::kMax, Binary::kMin};
  const std::vector<Unary> unary_ops = {Unary::kNeg, Unary::kAbs, Unary::kSqrt};
  const int length = pick(2, 24);
  for (int k = 0; k < length; ++k) {
    switch (pick(0, 4)) {
      case 0:
        c.steps.push_back({Kind::kUnary,
                           static_cast<uint8_t>(unary_ops[static_cast<size_t>(pick(0, 3))]),
                           dtype,
                           dtype,
                           {latest}});
        break;
      case 1:
        c.steps.push_back({Kind::kMultiplyAdd,
                           static_cast<uint8_t>(pick(0, 4)),
                           dtype,
                           dtype,
                           {latest, other(), other()}});
        break;
      default:
        c.steps.push_back({Kind::kBinary,
                           static_cast<uint8_t>(ops[static_cast<size_t>(pick(0, 6))]), dtype, dtype,
                           pick(0, 2) == 0 ? std::array<int32_t, 3>{latest, other()}
                                           : std::array<int32_t, 3>{other(), latest}});
        break;
    }
    latest = spmd::kernels::chain_result(static_cast<int>(c.steps.size() - 1));
    values.push_back(latest);
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) c.inputs[i].data = c.stored[i].bytes.data();
  return c;
}

RC_GTEST_PROP(Chain, RegisterRunsAreTheStepsOneByOne, ()) {
  const DType dtype = pick(0, 2) == 0 ? DType::kFloat32 : DType::kFloat64;
  // Lengths past register runs' least (4,096 elements), around the block sizes, with every
  // remainder of the vector loop.
  const std::array<int, 3> from = {4096, 6140, 8190};
  const int64_t n = from[static_cast<size_t>(pick(0, 3))] + pick(0, 80);
  const RunChain c = run_chain_of(dtype, n);
  const spmd::test::ChainCase named{.name = "a register run", .steps = c.steps, .n = n};
  Bytes got(static_cast<size_t>(n) * spmd::dtype_size(dtype));
  spmd::kernels::run_chain(c.steps, c.inputs, got.data(), n);
  RC_ASSERT(spmd::test::chain_values_match(named, got, step_by_step(c.steps, c.expanded, n)));
}

// The chains above are compiled into register runs where the CPU has AVX2 and FMA: the test
// must not pass by running them step by step.
TEST(Chain, RegisterRunsAreCompiledWhereTheCpuHasTheirInstructions) {
  if (!spmd::kernels::register_runs_enabled()) {
    GTEST_SKIP() << "no register runs here: the CPU lacks AVX2 or FMA, or SPMD_CHAIN_REGISTERS=0";
  }
  const int64_t before = spmd::kernels::register_runs_compiled();
  const auto mul = [](int32_t a, int32_t b) {
    return ChainStep{Kind::kBinary,
                     static_cast<uint8_t>(Binary::kMul),
                     DType::kFloat64,
                     DType::kFloat64,
                     {a, b}};
  };
  const auto unary = [](Unary op, int32_t a) {
    return ChainStep{Kind::kUnary, static_cast<uint8_t>(op), DType::kFloat64, DType::kFloat64, {a}};
  };
  using spmd::kernels::chain_result;
  // -|x⁵| · x by three products, x · x read twice, then the sign steps: a program the property
  // test above is unlikely ever to draw (about one chance in a billion a case).
  const std::vector<ChainStep> steps = {mul(0, 0),
                                        mul(chain_result(0), 0),
                                        mul(chain_result(1), chain_result(0)),
                                        unary(Unary::kAbs, chain_result(2)),
                                        unary(Unary::kNeg, chain_result(3)),
                                        mul(chain_result(4), 0)};
  const int64_t n = 5000;
  const Value x = make_value(DType::kFloat64, n, 3);
  Bytes got(static_cast<size_t>(n) * sizeof(double));
  const std::vector<Input> inputs = {x.input()};
  spmd::kernels::run_chain(steps, inputs, got.data(), n);
  EXPECT_EQ(got, step_by_step(steps, {x}, n));
  EXPECT_EQ(spmd::kernels::register_runs_compiled(), before + 1);
}

// Runs take the widest vectors the CPU has (register_run.h), unless SPMD_CHAIN_REGISTERS says
// otherwise: CTest runs this file's chain tests again as Avx2Runs.* with it set to avx2.
TEST(Chain, RegisterRunsTakeTheWidestVectorsTheCpuHas) {
  using spmd::kernels::RunVectors;
  const char* env = std::getenv("SPMD_CHAIN_REGISTERS");
  const std::string set = env == nullptr ? "" : env;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const RunVectors widest = avx512 ? RunVectors::kAvx512
                            : avx2 ? RunVectors::kAvx2
                                   : RunVectors::kNone;
  const RunVectors want = set == "0"              ? RunVectors::kNone
                          : set == "avx2" && avx2 ? RunVectors::kAvx2
                                                  : widest;
  EXPECT_EQ(spmd::kernels::register_run_vectors(), want) << "SPMD_CHAIN_REGISTERS=" << set;
  EXPECT_EQ(spmd::kernels::register_run_vectors_supported(RunVectors::kAvx512), avx512);
  EXPECT_EQ(spmd::kernels::register_run_vectors_supported(RunVectors::kAvx2), avx2);
  EXPECT_FALSE(spmd::kernels::register_run_vectors_supported(RunVectors::kNone));
}

// A run of every op kind over special values, compiled for ymm and for zmm: the same bits from
// both, in the vector loop and in the tail, for float32 and float64 alike.
template <class F>
std::vector<F> run_at(spmd::kernels::RunVectors width, const spmd::kernels::RunProgram& p,
                      const std::vector<std::vector<F>>& slots, int64_t n) {
  const spmd::kernels::CompiledRun run = spmd::kernels::compile_run(p, width);
  if (!run) return {};
  std::vector<const std::byte*> in;
  for (const auto& s : slots) in.push_back(reinterpret_cast<const std::byte*>(s.data()));
  std::vector<F> out(static_cast<size_t>(n * p.outputs));
  std::vector<std::byte*> outs;
  for (int o = 0; o < p.outputs; ++o) {
    outs.push_back(reinterpret_cast<std::byte*>(out.data() + o * n));
  }
  run.fn(in.data(), outs.data(), n);
  return out;
}

template <class F>
void expect_widths_agree(DType dtype) {
  using spmd::kernels::run_value;
  using spmd::kernels::RunOp;
  using K = RunOp::Kind;
  const auto op = [](K kind, std::array<int16_t, 3> args, int16_t store = -1, uint8_t signs = 0) {
    return RunOp{kind, signs, args, store};
  };
  // Slots: x and y (n elements each), c (one element).
  spmd::kernels::RunProgram p{dtype, {}, {false, false, true}, 4};
  p.ops = {op(K::kMax, {0, 1}),                               // 0
           op(K::kMin, {run_value(0), 2}, 0),                 // 1
           op(K::kMultiplyAdd, {0, 1, run_value(1)}, -1, 3),  // 2: -x y - that
           op(K::kDiv, {run_value(2), 1}),                    // 3
           op(K::kSqrt, {run_value(3)}),                      // 4
           op(K::kAbs, {0}),                                  // 5
           op(K::kSub, {run_value(4), run_value(5)}, 1),      // 6
           op(K::kNeg, {run_value(6)}),                       // 7
           op(K::kMin, {1, run_value(7)}),                    // 8
           op(K::kMax, {run_value(8), 0}, 2),                 // 9
           op(K::kMul, {run_value(9), 2}),                    // 10
           op(K::kAdd, {run_value(10), run_value(3)}, 3)};    // 11
  const std::vector<double> special = spmd::test::special_values(dtype);
  const int64_t n = 16 * 24 + 13;  // whole zmm vectors, then a tail longer than a ymm vector
  std::vector<std::vector<F>> slots(3);
  for (int64_t i = 0; i < n; ++i) {
    slots[0].push_back(static_cast<F>(special[static_cast<size_t>(i) % special.size()]));
    slots[1].push_back(static_cast<F>(special[static_cast<size_t>(i * 5 + 3) % special.size()]));
  }
  slots[2] = {F(0)};
  for (const double c : {0.0, -0.0, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    slots[2][0] = static_cast<F>(c);
    const auto narrow = run_at<F>(spmd::kernels::RunVectors::kAvx2, p, slots, n);
    const auto wide = run_at<F>(spmd::kernels::RunVectors::kAvx512, p, slots, n);
    ASSERT_EQ(narrow.size(), static_cast<size_t>(n * p.outputs)) << "no AVX2 run compiled";
    ASSERT_EQ(wide.size(), narrow.size()) << "no AVX-512 run compiled";
    for (size_t i = 0; i < narrow.size(); ++i) {
      const bool both_nan = std::isnan(narrow[i]) && std::isnan(wide[i]);  // "some NaN"
      using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
      ASSERT_TRUE(both_nan || std::bit_cast<Bits>(narrow[i]) == std::bit_cast<Bits>(wide[i]))
          << "output " << i / static_cast<size_t>(n) << ", element " << i % static_cast<size_t>(n)
          << ", c = " << c << ": ymm " << narrow[i] << ", zmm " << wide[i];
    }
  }
}

TEST(Chain, RunsOnZmmAreTheBitsOfRunsOnYmm) {
  using spmd::kernels::RunVectors;
  if (!spmd::kernels::register_run_vectors_supported(RunVectors::kAvx512)) {
    GTEST_SKIP() << "this CPU lacks AVX-512 Foundation: runs are compiled for ymm only";
  }
  expect_widths_agree<float>(DType::kFloat32);
  expect_widths_agree<double>(DType::kFloat64);
}

// nn.gelu's arithmetic shape with a quotient and a difference after it, over special values
// (signed zeros, subnormals, infinities, NaN, the extremes): block by block, every step rounds as
// the steps run one by one over all the elements do, a value read twice (step 3's) included.
TEST(Chain, ArithmeticOnSpecialValuesIsTheStepsOneByOne) {
  using spmd::kernels::chain_result;
  const auto binary = [](Binary op, int32_t a, int32_t b) {
    return ChainStep{
        Kind::kBinary, static_cast<uint8_t>(op), DType::kFloat32, DType::kFloat32, {a, b}};
  };
  const std::vector<ChainStep> steps = {
      binary(Binary::kMul, 0, 0),                // 0: x x
      binary(Binary::kMul, chain_result(0), 0),  // 1: x³
      binary(Binary::kMul, 1, chain_result(1)),  // 2: 0.044715 x³
      binary(Binary::kAdd, 0, chain_result(2)),  // 3: x + that (read twice)
      binary(Binary::kMul, chain_result(3), 2),  // 4
      {Kind::kUnary,
       static_cast<uint8_t>(Unary::kNeg),
       DType::kFloat32,
       DType::kFloat32,
       {chain_result(4)}},                                    // 5
      binary(Binary::kAdd, 3, chain_result(5)),               // 6: 1 + that
      binary(Binary::kMul, chain_result(6), 4),               // 7: · 0.5
      binary(Binary::kMul, 0, chain_result(7)),               // 8: · x
      binary(Binary::kDiv, chain_result(8), 5),               // 9: / y
      binary(Binary::kSub, chain_result(9), chain_result(3))  // 10: minus step 3's value
  };
  // chain_cases.h's float32 special values, cycled from two starting points (x and y), and the
  // constants as one element each.
  const std::vector<double> special = spmd::test::special_values(DType::kFloat32);
  const auto cycled = [&](int64_t n, size_t from) {
    std::vector<double> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = special[(i + from) % special.size()];
    return v;
  };
  for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{1000}, int64_t{4099}}) {
    spmd::test::ChainCase c{.name = "gelu's arithmetic", .steps = steps, .n = n};
    for (const std::vector<double>& v :
         {cycled(n, 0), {0.044715}, {0.7978845834732056}, {1.0}, {0.5}, cycled(n, 7)}) {
      c.inputs.push_back(spmd::test::chain_value(DType::kFloat32, v));
    }
    std::vector<Value> values;
    for (const auto& v : c.inputs) values.push_back({v.dtype, v.bytes, v.elements});
    EXPECT_TRUE(spmd::test::chain_values_match(c, spmd::test::cpu_chain_result(c),
                                               step_by_step(steps, values, n)))
        << n << " elements";
  }
}

// chain_cases.h's multiply-adds against std::fma element by element, signs flipped by negation:
// the product and the sum rounded once, however the chain's vector loop computes it.
template <class F>
Bytes fma_one_by_one(const spmd::test::ChainCase& c) {
  const auto value = [&](size_t input, int64_t i) {
    const spmd::test::ChainValue& v = c.inputs[input];
    F x;
    std::memcpy(&x, v.bytes.data() + (v.elements == 1 ? 0 : i) * sizeof(F), sizeof(F));
    return x;
  };
  const uint8_t form = c.steps.front().fn;
  Bytes out(static_cast<size_t>(c.n) * sizeof(F));
  for (int64_t i = 0; i < c.n; ++i) {
    const F a = value(0, i), b = value(1, i), z = value(2, i);
    const F r = std::fma((form & spmd::kernels::kNegateProduct) != 0 ? -a : a, b,
                         (form & spmd::kernels::kNegateAddend) != 0 ? -z : z);
    std::memcpy(out.data() + i * static_cast<int64_t>(sizeof(F)), &r, sizeof(F));
  }
  return out;
}

TEST(Chain, AMultiplyAddIsTheProductAndSumRoundedOnce) {
  for (const spmd::test::ChainCase& c : spmd::test::multiply_add_cases()) {
    const Bytes want =
        c.out() == DType::kFloat32 ? fma_one_by_one<float>(c) : fma_one_by_one<double>(c);
    EXPECT_TRUE(spmd::test::chain_values_match(c, spmd::test::cpu_chain_result(c), want)) << c.name;
  }
  // Not the product rounded first: 0.1f × 10 + (-1) is 1.49e-8 rounded once, 0 rounded twice.
  const spmd::test::ChainCase tenth{
      .name = "0.1 x 10 - 1",
      .steps = {{Kind::kMultiplyAdd, 0, DType::kFloat32, DType::kFloat32, {0, 1, 2}}},
      .inputs = {spmd::test::chain_value(DType::kFloat32, {0.1}),
                 spmd::test::chain_value(DType::kFloat32, {10.0}),
                 spmd::test::chain_value(DType::kFloat32, {-1.0})},
      .n = 1};
  float got = 0;
  std::memcpy(&got, spmd::test::cpu_chain_result(tenth).data(), sizeof got);
  EXPECT_EQ(got, std::fma(0.1f, 10.0f, -1.0f));
  EXPECT_NE(got, 0.1f * 10.0f - 1.0f);
}

TEST(Chain, AStepReadingALaterStepOrAMissingInputIsRefused) {
  const Value a = make_value(DType::kFloat32, 4, 0);
  const std::vector<Input> inputs = {a.input()};
  Bytes out(16);
  const std::vector<ChainStep> later = {
      {Kind::kUnary,
       static_cast<uint8_t>(Unary::kNeg),
       DType::kFloat32,
       DType::kFloat32,
       {spmd::kernels::chain_result(1)}},
      {Kind::kUnary, static_cast<uint8_t>(Unary::kNeg), DType::kFloat32, DType::kFloat32, {0}}};
  EXPECT_THROW(spmd::kernels::run_chain(later, inputs, out.data(), 4), spmd::InvalidArgument);
  const std::vector<ChainStep> missing = {{Kind::kBinary,
                                           static_cast<uint8_t>(Binary::kAdd),
                                           DType::kFloat32,
                                           DType::kFloat32,
                                           {0, 1}}};
  EXPECT_THROW(spmd::kernels::run_chain(missing, inputs, out.data(), 4), spmd::InvalidArgument);
  EXPECT_THROW(spmd::kernels::run_chain({}, inputs, out.data(), 4), spmd::InvalidArgument);
}

// Adam's bias correction inside its update, m / (1 - b^float(t)), as jit fuses it: the scalar
// steps are computed once (chain_hoist.h) and the chain's values are those of every step run
// over all the elements.
TEST(Chain, ScalarStepsAreComputedOnceWithTheSameValues) {
  const int64_t n = 3000;
  Value t = make_value(DType::kInt32, 1, 3);
  reinterpret_cast<int32_t*>(t.bytes.data())[0] = 7;
  Value b = make_value(DType::kFloat32, 1, 0), one = make_value(DType::kFloat32, 1, 0);
  reinterpret_cast<float*>(b.bytes.data())[0] = 0.999f;
  reinterpret_cast<float*>(one.bytes.data())[0] = 1.0f;
  const Value m = make_value(DType::kFloat32, n, 1);
  const std::vector<Value> values = {t, b, one, m};
  const auto binary = [](Binary op, int32_t x, int32_t y) {
    return ChainStep{
        Kind::kBinary, static_cast<uint8_t>(op), DType::kFloat32, DType::kFloat32, {x, y}};
  };
  using spmd::kernels::chain_result;
  const std::vector<ChainStep> steps = {{Kind::kConvert, 0, DType::kInt32, DType::kFloat32, {0}},
                                        binary(Binary::kPow, 1, chain_result(0)),
                                        binary(Binary::kSub, 2, chain_result(1)),
                                        binary(Binary::kDiv, 3, chain_result(2)),
                                        {Kind::kUnary,
                                         static_cast<uint8_t>(Unary::kNeg),
                                         DType::kFloat32,
                                         DType::kFloat32,
                                         {chain_result(3)}}};
  std::vector<Input> inputs;
  for (const Value& v : values) inputs.push_back(v.input());
  const spmd::kernels::HoistedChain h = spmd::kernels::hoist_uniform_steps(steps, inputs, n);
  EXPECT_EQ(h.hoisted, 3);
  ASSERT_EQ(h.steps.size(), 2u);
  EXPECT_EQ(h.inputs.size(), inputs.size() + 3);
  EXPECT_EQ(h.steps[0].args[1], 6);  // the third hoisted value, 1 - b^t
  EXPECT_EQ(h.steps[1].args[0], chain_result(0));
  Bytes got(static_cast<size_t>(n) * 4);
  spmd::kernels::run_chain(steps, inputs, got.data(), n);
  const Bytes want = step_by_step(steps, values, n);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
  // The last step is never hoisted, though it reads only scalars: it writes all n elements.
  const std::vector<ChainStep> all_scalar(steps.begin(), steps.begin() + 3);
  EXPECT_EQ(spmd::kernels::hoist_uniform_steps(all_scalar, inputs, n).steps.size(), 1u);
  spmd::kernels::run_chain(all_scalar, inputs, got.data(), n);
  const Bytes scalar_want = step_by_step(all_scalar, values, n);
  EXPECT_EQ(std::memcmp(got.data(), scalar_want.data(), got.size()), 0);
  // One element: nothing to save, nothing hoisted.
  EXPECT_EQ(spmd::kernels::hoist_uniform_steps(steps, inputs, 1).hoisted, 0);
}

// A hoisted integer division by zero is the chain's error, as it is unhoisted.
TEST(Chain, AHoistedDivisionByZeroIsTheChainsError) {
  Value zero = make_value(DType::kInt32, 1, 5);  // (5 % 11) - 5 = 0
  ASSERT_EQ(reinterpret_cast<const int32_t*>(zero.bytes.data())[0], 0);
  const Value a = make_value(DType::kInt32, 1, 8), x = make_value(DType::kInt32, 100, 1);
  const std::vector<Input> inputs = {a.input(), zero.input(), x.input()};
  const std::vector<ChainStep> steps = {
      {Kind::kBinary, static_cast<uint8_t>(Binary::kDiv), DType::kInt32, DType::kInt32, {0, 1}},
      {Kind::kBinary,
       static_cast<uint8_t>(Binary::kAdd),
       DType::kInt32,
       DType::kInt32,
       {2, spmd::kernels::chain_result(0)}}};
  Bytes out(400);
  EXPECT_THROW(spmd::kernels::run_chain(steps, inputs, out.data(), 100), spmd::InvalidArgument);
}

TEST(Chain, AnIntegerDivisionByZeroInsideAChainIsAnError) {
  const int64_t n = 3000;  // the zero lies in a later block than the first
  Value divisor = make_value(DType::kInt32, n, 3);
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    reinterpret_cast<int32_t*>(divisor.bytes.data())[i] = i == 2500 ? 0 : 2;
  }
  const Value a = make_value(DType::kInt32, n, 1);
  const std::vector<Input> inputs = {a.input(), divisor.input()};
  const std::vector<ChainStep> steps = {
      {Kind::kBinary, static_cast<uint8_t>(Binary::kDiv), DType::kInt32, DType::kInt32, {0, 1}},
      {Kind::kUnary,
       static_cast<uint8_t>(Unary::kNeg),
       DType::kInt32,
       DType::kInt32,
       {spmd::kernels::chain_result(0)}}};
  Bytes out(static_cast<size_t>(n) * 4);
  try {
    spmd::kernels::run_chain(steps, inputs, out.data(), n);
    FAIL() << "a zero divisor went through";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  }
}

}  // namespace

// The square root is correctly rounded in the vector body as in the scalar tail (Eigen's float32
// one on AVX is a reciprocal estimate and a Newton step: sqrt(4) came out 1.9999999), and rsqrt
// is one over it, as XLA's CPU code computes both.
TEST(Chain, SquareRootsAreCorrectlyRoundedWhereverTheElementFalls) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 2 == 0 ? static_cast<float>(i * i) : static_cast<float>(i) * 0.37f + 1e-3f;
  }
  // The special values, in the vector body and in the tail.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const size_t at : {size_t{8}, x.size() - 6}) {
    const float special[] = {0.0f, -0.0f, inf, -1.0f, nan, -inf};
    std::copy(std::begin(special), std::end(special), x.begin() + static_cast<std::ptrdiff_t>(at));
  }
  for (const Unary op : {Unary::kSqrt, Unary::kRsqrt}) {
    std::vector<float> out(x.size());
    const ChainStep step{.kind = Kind::kUnary,
                         .fn = static_cast<uint8_t>(op),
                         .dtype = DType::kFloat32,
                         .result = DType::kFloat32,
                         .args = {spmd::kernels::chain_input(0)}};
    const Input in[] = {
        {reinterpret_cast<const std::byte*>(x.data()), static_cast<int64_t>(x.size())}};
    spmd::kernels::run_chain({&step, 1}, in, reinterpret_cast<std::byte*>(out.data()),
                             static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const auto root = static_cast<float>(std::sqrt(static_cast<double>(x[i])));
      const float want = op == Unary::kSqrt ? root : 1.0f / root;
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(out[i])) << "element " << i << " of " << x[i] << ": " << out[i];
      } else {
        // Bit for bit: sqrt(-0) is -0 and rsqrt(-0) is -inf.
        ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want))
            << "element " << i << " of " << x[i] << ": " << out[i] << ", not " << want;
      }
    }
  }
}
