// The contraction's operands and result reach the matrix product where they lie (jit/ops/
// gemm_plan.h, kernels/matmul.h's strides): the attention's permuted einsums and their
// gradients are multiplied with no copy around the product, a result stored the other way round
// is the swapped product, and only letters no stride describes are copied. Every letter order of
// a batched contraction, in every dtype the product takes, matches the einsum's definition
// (small integers: exact in each). Part of jit_property_test (its main initializes the devices).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "jit/execute.h"
#include "jit/ops/gemm_plan.h"
#include "jit/partition.h"
#include "jit/program.h"
#include "jit/program_parse.h"
#include "kernels/dispatch.h"
#include "support/counting_backend.h"

namespace {

namespace compiler = spmd::compiler;
using spmd::Block;
using spmd::DType;
using spmd::Shape;

using Sizes = std::map<char, int64_t>;

Shape shape_of(const std::string& letters, const Sizes& sizes) {
  Shape s;
  for (char c : letters) s.push_back(sizes.at(c));
  return s;
}

// Small integers, exact in every dtype: element i is ((i·7 + seed) mod 7) − 3.
std::vector<double> values(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = double((i * 7 + seed) % 7 - 3);
  return v;
}

Block block_of(DType dtype, const Shape& shape, const std::vector<double>& v) {
  Block b = Block::zeros(dtype, shape);
  std::byte* out = b.mutable_bytes().data();
  spmd::kernels::visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (spmd::kernels::is_half<T>) {
      const std::vector<float> wide(v.begin(), v.end());
      spmd::kernels::from_wide(dtype, wide, out);
    } else {
      for (size_t i = 0; i < v.size(); ++i) reinterpret_cast<T*>(out)[i] = static_cast<T>(v[i]);
    }
  });
  return b;
}

std::vector<double> doubles(const Block& b) {
  std::vector<double> v(static_cast<size_t>(b.size()));
  spmd::kernels::visit_dtype(b.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (spmd::kernels::is_half<T>) {
      const std::vector<float> wide = spmd::kernels::to_wide(b.dtype(), b.bytes().data(), b.size());
      std::copy(wide.begin(), wide.end(), v.begin());
    } else {
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(b.data<T>()[i]);
    }
  });
  return v;
}

// The einsum by its definition: every index of every letter, summed over those not in `out`.
std::vector<double> reference(const std::string& lhs, const std::string& rhs,
                              const std::string& out, const Sizes& sizes,
                              const std::vector<double>& x, const std::vector<double>& y) {
  std::string all;
  for (const auto& [c, size] : sizes) all += c;
  auto offset = [&](const std::string& letters, const std::map<char, int64_t>& at) {
    int64_t o = 0;
    for (char c : letters) o = o * sizes.at(c) + at.at(c);
    return o;
  };
  int64_t total = 1, result = 1;
  for (char c : all) total *= sizes.at(c);
  for (char c : out) result *= sizes.at(c);
  std::vector<double> z(static_cast<size_t>(result), 0.0);
  std::map<char, int64_t> at;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i;
    for (auto c = all.rbegin(); c != all.rend(); ++c) {
      at[*c] = rest % sizes.at(*c);
      rest /= sizes.at(*c);
    }
    z[static_cast<size_t>(offset(out, at))] +=
        x[static_cast<size_t>(offset(lhs, at))] * y[static_cast<size_t>(offset(rhs, at))];
  }
  return z;
}

struct Ran {
  std::vector<double> got, want;
  int matmuls, transposes;
};

// lhs · rhs → out as a one-device program on the counting backend.
Ran run(DType dtype, const std::string& lhs, const std::string& rhs, const std::string& out,
        const Sizes& sizes) {
  const Shape ls = shape_of(lhs, sizes), rs = shape_of(rhs, sizes), os = shape_of(out, sizes);
  const std::string text = fmt::format(
      "%0 = parameter {} index=0 sharding=PartitionSpec()\n"
      "%1 = parameter {} index=1 sharding=PartitionSpec()\n"
      "%2 = dot {} %0 %1 einsum={},{}->{}\n"
      "return %2\n",
      compiler::type_text(dtype, ls), compiler::type_text(dtype, rs),
      compiler::type_text(dtype, os), lhs, rhs, out);
  const spmd::Mesh one({spmd::devices()[0]}, {"x"});
  const compiler::LocalProgram local =
      compiler::partition(compiler::parse_program(text, one), one, "layout");
  const spmd::testing::CountingBackend backend;
  const compiler::KernelContext device{backend, backend.memory(0)};
  int64_t nl = 1, nr = 1;
  for (int64_t d : ls) nl *= d;
  for (int64_t d : rs) nr *= d;
  const std::vector<double> x = values(nl, 1), y = values(nr, 4);
  std::vector<Block> inputs{block_of(dtype, ls, x), block_of(dtype, rs, y)};
  const std::vector<Block> result = compiler::execute(local, device, inputs);
  return {doubles(result[0]), reference(lhs, rhs, out, sizes, x, y), backend.calls("matmul"),
          backend.calls("transpose")};
}

// Batch 2 × heads 3, queries 5, keys 4, head width 6.
const Sizes kAttention{{'b', 2}, {'h', 3}, {'q', 5}, {'k', 4}, {'d', 6}};

TEST(ContractionLayout, TheAttentionsEinsumsAndTheirGradientsAreMultipliedWithNoCopy) {
  for (const char* spec : {"bqhd,bkhd->bhqk", "bhqk,bkhd->bqhd", "bhqk,bqhd->bkhd",
                           "bkhd,bhqk->bqhd", "bqhd,bhqk->bkhd"}) {
    SCOPED_TRACE(spec);
    const std::string s = spec;
    const std::string lhs = s.substr(0, 4), rhs = s.substr(5, 4), out = s.substr(11);
    const Ran r = run(DType::kFloat32, lhs, rhs, out, kAttention);
    EXPECT_EQ(r.got, r.want);
    EXPECT_EQ(r.matmuls, 1);
    EXPECT_EQ(r.transposes, 0) << "an operand or the result was copied around the product";
  }
}

TEST(ContractionLayout, AResultStoredTheOtherWayRoundIsTheSwappedProduct) {
  const Sizes sizes{{'i', 5}, {'j', 7}, {'k', 3}};
  const compiler::ContractionLetters c{.contracting = "j", .lhs_free = "i", .rhs_free = "k"};
  for (const char* spec : {"ij,jk->ki", "ji,kj->ki", "ij,kj->ki"}) {
    SCOPED_TRACE(spec);
    const std::string s = spec;
    const compiler::GemmPlan plan =
        compiler::plan_gemm(s.substr(0, 2), s.substr(3, 2), "ki", c, sizes);
    EXPECT_TRUE(plan.swap);
    EXPECT_FALSE(plan.arrange_lhs || plan.arrange_rhs || plan.arrange_out);
    EXPECT_EQ(plan.shape.m, 3);
    EXPECT_EQ(plan.shape.n, 5);
    const Ran r = run(DType::kFloat64, s.substr(0, 2), s.substr(3, 2), "ki", sizes);
    EXPECT_EQ(r.got, r.want);
    EXPECT_EQ(r.transposes, 0);
  }
}

TEST(ContractionLayout, OnlyLettersNoStrideDescribesAreCopied) {
  // The contracting letters j, k lie in the other order in the rhs: one matrix dimension
  // cannot read both, so the rhs alone is copied into matrix order.
  const Sizes sizes{{'i', 3}, {'j', 4}, {'k', 5}, {'l', 2}};
  const compiler::ContractionLetters c{.contracting = "jk", .lhs_free = "i", .rhs_free = "l"};
  const compiler::GemmPlan plan = compiler::plan_gemm("ijk", "kjl", "il", c, sizes);
  EXPECT_FALSE(plan.arrange_lhs);
  EXPECT_TRUE(plan.arrange_rhs);
  EXPECT_FALSE(plan.arrange_out);
  const Ran r = run(DType::kFloat32, "ijk", "kjl", "il", sizes);
  EXPECT_EQ(r.got, r.want);
  EXPECT_EQ(r.transposes, 1);
  // Size-one letters place no constraint: "i1j" with a middle letter of one element is a
  // plain matrix.
  const Sizes ones{{'i', 3}, {'u', 1}, {'j', 4}, {'k', 2}};
  const compiler::GemmPlan flat = compiler::plan_gemm(
      "iuj", "jk", "ik", {.contracting = "j", .lhs_free = "iu", .rhs_free = "k"}, ones);
  EXPECT_FALSE(flat.arrange_lhs || flat.arrange_rhs || flat.arrange_out || flat.swap);
}

// A letter of no elements (an empty contraction, an empty batch, an empty free letter) in any
// letter order: zeros where there are elements, nothing where there are none.
TEST(ContractionLayout, EmptyLettersInAnyOrderGiveTheDefinitionsZerosOrNothing) {
  std::mt19937 rng(7);
  for (char empty : {'j', 'a', 'm'}) {
    Sizes sizes{{'a', 2}, {'m', 3}, {'n', 4}, {'j', 5}};
    sizes[empty] = 0;
    for (int trial = 0; trial < 6; ++trial) {
      std::string lhs = "amj", rhs = "ajn", out = "amn";
      std::shuffle(lhs.begin(), lhs.end(), rng);
      std::shuffle(rhs.begin(), rhs.end(), rng);
      std::shuffle(out.begin(), out.end(), rng);
      SCOPED_TRACE(fmt::format("'{}' empty: {},{}->{}", empty, lhs, rhs, out));
      const Ran r = run(DType::kFloat32, lhs, rhs, out, sizes);
      EXPECT_EQ(r.got, r.want);
      EXPECT_EQ(r.got.size(), empty == 'j' ? 2u * 3 * 4 : 0u);
    }
  }
}

// Every dtype the product takes, with the letters of both operands and the result shuffled: two
// batch letters, two contracting, one free letter on each side.
TEST(ContractionLayout, EveryLetterOrderInEveryDtypeMatchesTheDefinition) {
  const Sizes sizes{{'a', 2}, {'b', 3}, {'m', 4}, {'n', 3}, {'j', 2}, {'k', 3}};
  std::mt19937 rng(51);
  int copied = 0, in_place = 0;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                      DType::kInt32, DType::kInt64}) {
    for (int trial = 0; trial < 24; ++trial) {
      std::string lhs = "abmjk", rhs = "abjkn", out = "abmn";
      std::shuffle(lhs.begin(), lhs.end(), rng);
      std::shuffle(rhs.begin(), rhs.end(), rng);
      std::shuffle(out.begin(), out.end(), rng);
      SCOPED_TRACE(fmt::format("{} {},{}->{}", spmd::dtype_name(dtype), lhs, rhs, out));
      const Ran r = run(dtype, lhs, rhs, out, sizes);
      ASSERT_EQ(r.got, r.want);
      ASSERT_EQ(r.matmuls, 1);
      (r.transposes == 0 ? in_place : copied) += 1;
    }
  }
  EXPECT_GT(in_place, 0);  // the shuffles reach both paths
  EXPECT_GT(copied, 0);
}

}  // namespace
