// Sharding in types (jit.h, "Explicit axes"; src/jit/sharding_in_types.h): a Tensor's type knows
// its split while tracing, the compiled program holds each value to its type (its values equal
// the unsplit computation, its moves are the ones the types imply), the remedies of the errors
// work, and gradients, vmap and shard_map keep types. explicit_jax_test.py compares the rules
// themselves with JAX's. Part of jit_property_test (its main initializes 4 CPU devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <functional>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::AxisType;
using spmd::HostArray;
using spmd::Mesh;
using spmd::NamedSharding;
using spmd::None;
using spmd::P;
using spmd::Tensor;

HostArray counting(int64_t rows, int64_t cols, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) * scale - 2.0f;
  return HostArray::from_vector(v, {rows, cols});
}

Mesh explicit_mesh() { return spmd::make_mesh({2, 2}, {"x", "y"}); }

std::string spec_text(const Array& a) {
  return dynamic_cast<const NamedSharding&>(a.sharding()).spec().to_string();
}

// `spec` without its trailing None entries, as an Array's sharding prints it.
P trimmed(const P& spec) {
  std::vector<spmd::AxisEntry> entries = spec.entries();
  while (!entries.empty() && entries.back().is_none()) entries.pop_back();
  return P::from_entries(std::move(entries));
}

std::vector<float> values(const Array& a) {
  const HostArray h = spmd::multihost::process_allgather(a);
  return {h.data<float>().begin(), h.data<float>().end()};
}

TEST(ShardingInTypes, ATensorKnowsItsShardingWhileTracing) {
  const Mesh mesh = explicit_mesh();
  const Array x = spmd::device_put(counting(8, 4), NamedSharding(mesh, P("x", None)));
  std::vector<std::string> seen;
  std::vector<Mesh> meshes;
  auto f = spmd::jit([&](const Tensor& t) {
    seen.push_back(t.sharding().spec().to_string());
    Tensor u = jnp::transpose(t);
    seen.push_back(u.sharding().spec().to_string());
    seen.push_back(u.to_string());
    const Tensor s = jnp::sum(t, {0});
    seen.push_back(s.sharding().spec().to_string());
    meshes.push_back(s.sharding().mesh());
    return u;
  });
  EXPECT_EQ(spec_text(f(x)), P(None, "x").to_string());
  EXPECT_EQ(seen, (std::vector<std::string>{P("x", None).to_string(), P(None, "x").to_string(),
                                            "Tensor(f32[4,8@x], %1)", P(None).to_string()}));
  // Auto axes are never in a type.
  const Mesh auto_mesh = spmd::make_mesh({2, 2}, {"x", "y"}, {AxisType::kAuto, AxisType::kAuto});
  const Array z = spmd::device_put(counting(8, 4), NamedSharding(auto_mesh, P("x", None)));
  seen.clear();
  EXPECT_EQ(spec_text(f(z)), P(None, "x").to_string()) << "propagation still splits it";
  EXPECT_EQ(seen[0], P(None, None).to_string());
  ASSERT_EQ(meshes.size(), 2u);
  EXPECT_TRUE(meshes[0] == mesh && meshes[1] == auto_mesh) << "a type's mesh is the jit's";
}

// The same function on split inputs over the explicit mesh and on one device.
void expect_same_values(const std::function<Tensor(const Tensor&, const Tensor&)>& fn,
                        const P& a_spec, const P& b_spec, const std::string& what) {
  const Mesh mesh = explicit_mesh();
  const HostArray a = counting(8, 8), b = counting(8, 8, 0.5f);
  std::string type;
  auto f = spmd::jit([&](const Tensor& x, const Tensor& y) {
    Tensor out = fn(x, y);
    type = trimmed(out.sharding().spec()).to_string();
    return out;
  });
  const Array held = f(spmd::device_put(a, NamedSharding(mesh, a_spec)),
                       spmd::device_put(b, NamedSharding(mesh, b_spec)));
  EXPECT_EQ(spec_text(held), type) << what << ": the result is laid out as its type";
  const std::vector<float> split = values(held);
  const Mesh one = spmd::make_mesh({1, 1}, {"x", "y"});
  // The same types on axes of size 1: every device holds everything.
  const std::vector<float> whole = values(f(spmd::device_put(a, NamedSharding(one, a_spec)),
                                            spmd::device_put(b, NamedSharding(one, b_spec))));
  ASSERT_EQ(split.size(), whole.size()) << what;
  for (size_t i = 0; i < split.size(); ++i) ASSERT_NEAR(split[i], whole[i], 1e-4f) << what << i;
}

TEST(ShardingInTypes, HeldValuesEqualTheUnsplitComputation) {
  using Fn = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"matmul out_sharding",
       [](const Tensor& a, const Tensor& b) { return jnp::matmul(a, b, P(None, "x")); }},
      {"one side split",
       [](const Tensor& a, const Tensor& b) {
         return jnp::matmul(spmd::reshard(a, P(None, "y")), spmd::reshard(b, P()));
       }},
      {"reshape merge and split",
       [](const Tensor& a, const Tensor& b) {
         return jnp::reshape(jnp::reshape(a + b, {64}) * 2.0f, {8, 8});
       }},
      {"reshard then reduce",
       [](const Tensor& a, const Tensor&) { return jnp::sum(spmd::reshard(a, P("y", "x")), {1}); }},
      {"zeros out_sharding",
       [](const Tensor& a, const Tensor&) {
         return jnp::zeros({8, 8}, spmd::DType::kFloat32, P("x", "y")) + jnp::exp(a * 0.1f);
       }},
      {"slice and concatenate",
       [](const Tensor& a, const Tensor& b) {
         const Tensor tail = spmd::reshard(jnp::slice(b, {4}, {8}), P("x", None));
         return jnp::concatenate({jnp::slice(a, {0}, {4}), tail}, 0);
       }},
      {"softmax", [](const Tensor& a, const Tensor&) { return jnp::softmax(a * 0.3f, 1); }},
      {"gradient",
       [](const Tensor& a, const Tensor& b) {
         return spmd::grad([&](const Tensor& w) {
           const Tensor y = jnp::matmul(a, w);
           return jnp::sum(y * y);
         })(b);
       }},
  };
  for (const auto& [what, fn] : cases) expect_same_values(fn, P("x", None), P(None, "y"), what);
}

TEST(ShardingInTypes, TheProgramMovesWhatTheTypesSay) {
  const Mesh mesh = explicit_mesh();
  const Array a = spmd::device_put(counting(8, 8), NamedSharding(mesh, P("x", "y")));
  const Array b = spmd::device_put(counting(8, 4), NamedSharding(mesh, P("y", None)));
  // The contracting dimension split on both sides: partial sums over y, settled by one psum to
  // the type out_sharding gives.
  auto f =
      spmd::jit([](const Tensor& x, const Tensor& w) { return jnp::matmul(x, w, P("x", None)); });
  const Array out = f(a, b);
  EXPECT_EQ(spec_text(out), P("x").to_string());
  const std::string text = f.lower(a, b).as_text();
  EXPECT_NE(text.find("psum[y]"), std::string::npos) << text;
  EXPECT_NE(text.find("out_sharding=PartitionSpec('x', None)"), std::string::npos) << text;
  const std::string global = f.lower(a, b).global_text();
  EXPECT_NE(global.find("dot f32[8@x,4]"), std::string::npos)
      << "types print their splits: " << global;
  // Without it, the trace refuses, naming the operands' types and the remedy.
  auto ambiguous = spmd::jit([](const Tensor& x, const Tensor& w) { return jnp::matmul(x, w); });
  try {
    ambiguous(a, b);
    FAIL() << "an ambiguous contraction traced";
  } catch (const spmd::ShardingTypeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("f32[8@x,8@y], f32[8@y,4]"), std::string::npos) << m;
    EXPECT_NE(m.find("out_sharding="), std::string::npos) << m;
  }
  // An element-wise operation of two values typed alike moves nothing.
  auto g = spmd::jit([](const Tensor& x, const Tensor& y) { return x * y + 1.0f; });
  const std::string moves = g.lower(a, a).as_text();
  for (const char* collective : {"all_gather", "all_to_all", "psum"}) {
    EXPECT_EQ(moves.find(collective), std::string::npos) << moves;
  }
}

TEST(ShardingInTypes, TypesRefuseAutoAxesAndConstraintsRefuseExplicitOnes) {
  const Mesh mixed = spmd::make_mesh({2, 2}, {"x", "y"}, {AxisType::kExplicit, AxisType::kAuto});
  const Array a = spmd::device_put(counting(8, 8), NamedSharding(mixed, P("x", None)));
  auto out_auto = spmd::jit([](const Tensor& x) { return jnp::matmul(x, x, P(None, "y")); });
  EXPECT_THROW(out_auto(a), spmd::InvalidArgument);
  auto reshard_auto = spmd::jit([](const Tensor& x) { return spmd::reshard(x, P("y")); });
  EXPECT_THROW(reshard_auto(a), spmd::InvalidArgument);
  auto zeros_auto = spmd::jit([](const Tensor& x) {
    return x + jnp::zeros({8, 8}, spmd::DType::kFloat32, P("y"));
  });
  EXPECT_THROW(zeros_auto(a), spmd::InvalidArgument);
  auto constrain_explicit = spmd::jit(
      [](const Tensor& x) { return spmd::lax::with_sharding_constraint(x, P(None, "x")); });
  EXPECT_THROW(constrain_explicit(a), spmd::ShardingTypeError);
  // A constraint on the Auto axis keeps the type's Explicit one.
  auto constrain_auto = spmd::jit(
      [](const Tensor& x) { return spmd::lax::with_sharding_constraint(x * 2.0f, P(None, "y")); });
  EXPECT_EQ(spec_text(constrain_auto(a)), P("x", "y").to_string());
}

TEST(ShardingInTypes, GradientsHaveTheirPrimalsTypes) {
  const Mesh mesh = explicit_mesh();
  const Array x = spmd::device_put(counting(8, 8), NamedSharding(mesh, P("x", None)));
  const Array w = spmd::device_put(counting(8, 4), NamedSharding(mesh, P(None, "y")));
  std::vector<std::string> types;
  auto step = spmd::jit([&](const Tensor& xs, const Tensor& ws) {
    // A contraction over the split batch: JAX's transpose rule, like ours, gives it out_sharding.
    const auto [dx, dw] = spmd::grad<0, 1>([](const Tensor& a, const Tensor& b) {
      return jnp::sum(jnp::tanh(jnp::matmul(a, b)));
    })(xs, ws);  // NOLINT(readability-suspicious-call-argument)
    types = {dx.sharding().spec().to_string(), dw.sharding().spec().to_string()};
    return std::vector<Tensor>{dx, dw};
  });
  const std::vector<Array> grads = step(x, w);
  EXPECT_EQ(types, (std::vector<std::string>{P("x", None).to_string(), P(None, "y").to_string()}));
  EXPECT_EQ(spec_text(grads[0]), P("x").to_string());
  EXPECT_EQ(spec_text(grads[1]), P(None, "y").to_string());
}

TEST(ShardingInTypes, VmapAndShardMapKeepTypes) {
  const Mesh mesh = explicit_mesh();
  const HostArray host = HostArray::from_vector(std::vector<float>(size_t{256}, 0.25f), {4, 8, 8});
  const Array batch = spmd::device_put(host, NamedSharding(mesh, P("x", None, None)));
  std::string type;
  auto f = spmd::jit([&](const Tensor& t) {
    Tensor per_example = spmd::vmap([](const Tensor& m) { return jnp::matmul(m, m); })(t);
    type = per_example.sharding().spec().to_string();
    return per_example;
  });
  const Array out = f(batch);
  EXPECT_EQ(type, P("x", None, None).to_string());
  EXPECT_FLOAT_EQ(values(out)[0], 8 * 0.25f * 0.25f);
  // A shard_map's result has its out_specs' type.
  auto g = spmd::jit([&](const Tensor& t) {
    Tensor s =
        spmd::lax::shard_map([](const Tensor& b) { return b * 2.0f; }, mesh, {P("x")}, P("x"))(t);
    type = s.sharding().spec().to_string();
    return s;
  });
  EXPECT_FLOAT_EQ(values(g(batch))[0], 0.5f);
  EXPECT_EQ(type, P("x", None, None).to_string());
}

}  // namespace
