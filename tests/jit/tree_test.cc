// spmd::Tree: building, ordering, flatten/unflatten, tree_map; and nested trees through jit.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <map>
#include <string>
#include <vector>

namespace {

using spmd::Tree;

TEST(Tree, KeepsKeysInOrderAndRoundTripsThroughFlatten) {
  Tree<int> t{{"w", 1}, {"b", 2}};
  t["layer"]["z"] = 3;
  t["layer"]["a"] = 4;
  EXPECT_EQ(t.structure(), "{b:*,layer:{a:*,z:*,},w:*,}");
  EXPECT_EQ(spmd::tree_leaves(t), (std::vector<int>{2, 4, 3, 1}));
  const auto [leaves, structure] = spmd::tree_flatten(t);
  const Tree<int> back = spmd::tree_unflatten(structure, leaves);
  EXPECT_EQ(back.structure(), t.structure());
  EXPECT_EQ(spmd::tree_leaves(back), leaves);
  EXPECT_EQ(back.at("layer").at("z").leaf(), 3);
  EXPECT_THROW(spmd::tree_unflatten(structure, std::vector<int>{1, 2}), spmd::InvalidArgument);
}

TEST(Tree, MapsOneOrTwoTreesOfTheSameStructure) {
  const Tree<int> a{{"x", 1}, {"y", Tree<int>{{"z", 2}}}};
  const Tree<int> b{{"x", 10}, {"y", Tree<int>{{"z", 20}}}};
  const Tree<double> half = spmd::tree_map([](int v) { return v / 2.0; }, a);
  EXPECT_EQ(half.at("y").at("z").leaf(), 1.0);
  const Tree<int> sum = spmd::tree_map([](int p, int q) { return p + q; }, a, b);
  EXPECT_EQ(spmd::tree_leaves(sum), (std::vector<int>{11, 22}));
  EXPECT_THROW(spmd::tree_map([](int p, int q) { return p + q; }, a, Tree<int>{{"x", 1}}),
               spmd::InvalidArgument);
}

TEST(Tree, PathsRoundTripAndRefuseAKeyHoldingTheSeparator) {
  Tree<int> t{{"w", 1}};
  t["layer"]["b"] = 2;
  const std::map<std::string, int> paths = spmd::tree_to_paths(t);
  EXPECT_EQ(paths, (std::map<std::string, int>{{"layer/b", 2}, {"w", 1}}));
  EXPECT_EQ(spmd::tree_from_paths(paths).structure(), t.structure());
  EXPECT_THROW(spmd::tree_to_paths(Tree<int>{{"a/b", 1}}), spmd::InvalidArgument);
}

TEST(Tree, RefusesRepeatedAndReservedKeysAndLeafMisuse) {
  EXPECT_THROW((Tree<int>{{"a", 1}, {"a", 2}}), spmd::InvalidArgument);
  EXPECT_THROW((Tree<int>{{"a:b", 1}}), spmd::InvalidArgument);
  Tree<int> leaf(5);
  EXPECT_THROW(leaf["x"], spmd::InvalidArgument);
  EXPECT_THROW(Tree<int>().leaf(), spmd::InvalidArgument);
  EXPECT_THROW(Tree<int>().at("missing"), spmd::InvalidArgument);
}

TEST(Tree, NestedParameterTreesPassThroughJit) {
  namespace jnp = spmd::numpy;
  const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  const spmd::NamedSharding r(mesh, spmd::P());
  auto array = [&](const std::vector<float>& v, const spmd::Shape& s) {
    spmd::HostArray h = spmd::HostArray::from_vector(v, s);
    return spmd::make_array_from_callback(s, r, [&](const spmd::Index&) { return h; });
  };
  Tree<spmd::Array> params{{"scale", array({2}, {1})}};
  params["layer"]["w"] = array({1, 2, 3, 4}, {2, 2});
  params["layer"]["b"] = array({10, 20}, {2});
  auto step = spmd::jit([](const Tree<spmd::Tensor>& p, const spmd::Tensor& x) {
    const spmd::Tensor y =
        jnp::matmul(x, p.at("layer").at("w").leaf()) + p.at("layer").at("b").leaf();
    Tree<spmd::Tensor> out =
        spmd::tree_map([&](const spmd::Tensor& leaf) { return leaf * p.at("scale").leaf(); }, p);
    out.insert("y", y);
    return out;
  });
  const Tree<spmd::Array> out = step(params, array({1, 1}, {1, 2}));
  EXPECT_EQ(out.structure(), "{layer:{b:*,w:*,},scale:*,y:*,}");
  EXPECT_EQ(out.at("layer").at("w").leaf().to_host().data<float>()[3], 8);
  EXPECT_EQ(out.at("scale").leaf().to_host().data<float>()[0], 4);
  const spmd::HostArray y = out.at("y").leaf().to_host();
  EXPECT_EQ(y.data<float>()[0], 1 + 3 + 10);
  EXPECT_EQ(y.data<float>()[1], 2 + 4 + 20);
}

}  // namespace
