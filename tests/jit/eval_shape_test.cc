// spmd::eval_shape: result types from a trace alone (nothing allocated, so a shape larger than
// the machine answers), shardings in types on Explicit meshes, and the errors.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <optional>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::DType;
using spmd::ShapeDtypeStruct;
using spmd::Tensor;

TEST(EvalShape, GivesTheResultsTypesWithoutAllocating) {
  // 4 TiB of float32 in, 4 TiB out: only types are made.
  const std::vector<ShapeDtypeStruct> in = {{{1 << 20, 1 << 20}, DType::kFloat32, std::nullopt},
                                            {{1 << 20}, DType::kInt32, std::nullopt}};
  const auto outs = spmd::eval_shape(
      [](std::vector<Tensor>& x) {
        return std::vector<Tensor>{jnp::sum(x[0], {0}), x[0] * 2.0,
                                   jnp::astype(x[1], DType::kFloat16)};
      },
      in);
  ASSERT_EQ(outs.size(), 3U);
  EXPECT_EQ(outs[0].shape, (spmd::Shape{1 << 20}));
  EXPECT_EQ(outs[0].dtype, DType::kFloat32);
  EXPECT_EQ(outs[1].shape, (spmd::Shape{1 << 20, 1 << 20}));
  EXPECT_EQ(outs[2].dtype, DType::kFloat16);
  for (const auto& t : outs) EXPECT_FALSE(t.sharding.has_value());
}

TEST(EvalShape, AnExplicitMeshsShardingIsInTheResultsType) {
  const spmd::Mesh mesh({spmd::local_devices()[0]}, {1}, {"x"}, {spmd::AxisType::kExplicit});
  const spmd::NamedSharding split(mesh, spmd::P("x"));
  const auto outs = spmd::eval_shape(
      [](std::vector<Tensor>& x) {
        return std::vector<Tensor>{x[0] + 1.0, jnp::sum(x[0], {0})};
      },
      {{{8, 4}, DType::kFloat32, split}});
  ASSERT_EQ(outs.size(), 2U);
  ASSERT_TRUE(outs[0].sharding.has_value());
  EXPECT_EQ(outs[0].sharding->spec(), spmd::P("x", spmd::None));
  ASSERT_TRUE(outs[1].sharding.has_value());
  EXPECT_EQ(outs[1].sharding->spec(), spmd::P(spmd::None));
}

TEST(EvalShape, ErrorsOfTheFunctionAndOfTheTypesPropagate) {
  const auto reshaped = [](std::vector<Tensor>& x) {
    return std::vector<Tensor>{jnp::reshape(x[0], {5})};
  };
  EXPECT_THROW(spmd::eval_shape(reshaped, {{{4}, DType::kFloat32, std::nullopt}}), spmd::Error);
  const auto same = [](std::vector<Tensor>& x) { return x; };
  EXPECT_THROW(spmd::eval_shape(same, {{{-1}, DType::kFloat32, std::nullopt}}),
               spmd::InvalidArgument);
  const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  EXPECT_THROW(spmd::eval_shape(
                   same, {{{4}, DType::kFloat32, spmd::NamedSharding(mesh, spmd::P("x", "x"))}}),
               spmd::Error);
}

}  // namespace
