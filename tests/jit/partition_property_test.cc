// A RapidCheck property of the partitioner: random programs of element-wise operations,
// reductions, reshapes, transposes, contractions and sharding constraints, over random meshes of
// this process's 4 CPU devices and random input shardings, even or uneven, give the result of the
// same program on replicated inputs (every device computing the whole arrays).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;

// One step of a random program over the values computed so far (two inputs at the start).
struct OpChoice {
  int kind;  // 0 binary, 1 unary, 2 sum, 3 transpose, 4 reshape, 5 matmul, 6 constraint, 7 max
  int a, b;  // operand picks (modulo the values there are)
  int attr;  // axis, operation, or spec pick
};

std::vector<P> specs() {
  return {P(),
          P("a"),
          P(spmd::None, "b"),
          P("a", "b"),
          P("b", "a"),
          P(spmd::Axes{"a", "b"}),
          P(spmd::None, spmd::Axes{"b", "a"})};
}

// Applies one step; shapes stay 2-D so that every spec above applies.
Tensor apply(const OpChoice& c, const std::vector<Tensor>& v, const spmd::Mesh& mesh) {
  const Tensor& x = v[static_cast<size_t>(c.a) % v.size()];
  const Tensor& y = v[static_cast<size_t>(c.b) % v.size()];
  const bool same = x.shape() == y.shape();
  switch (c.kind) {
    case 0: {
      const Tensor other = same ? y : jnp::transpose(x);
      const Tensor rhs = other.shape() == x.shape() ? other : x;
      return c.attr % 3 == 0 ? x + rhs : c.attr % 3 == 1 ? x * rhs : jnp::maximum(x, rhs);
    }
    case 1:
      return c.attr % 2 == 0 ? jnp::relu(x) - 1.0f : -x * 0.5f;
    case 2:
      return jnp::sum(x, {c.attr % 2}, true);
    case 3:
      return jnp::transpose(x);
    case 4: {
      const Shape& s = x.shape();
      if (s[0] % 2 != 0) return x;
      return jnp::reshape(jnp::reshape(x, {s[0] / 2, s[1] * 2}), s);
    }
    case 5:
      return jnp::matmul(x, jnp::transpose(x)) * 0.125f;
    case 6: {
      const auto all = specs();
      // Even or uneven: an uneven split runs padded, as XLA's (layout.h).
      const P& spec = all[static_cast<size_t>(c.attr) % all.size()];
      return spmd::lax::with_sharding_constraint(x, NamedSharding(mesh, spec));
    }
    default:
      return jnp::max(x, {c.attr % 2}, true) + jnp::min(x, {(c.attr + 1) % 2}, true);
  }
}

Array make(const Shape& shape, const NamedSharding& sharding, int seed) {
  return spmd::make_array_from_callback(shape, sharding, [&](const spmd::Index& index) {
    HostArray h = HostArray::zeros(
        DType::kFloat32, {index[0].stop - index[0].start, index[1].stop - index[1].start});
    auto v = h.mutable_data<float>();
    const int64_t w = index[1].stop - index[1].start;
    for (int64_t k = 0; k < static_cast<int64_t>(v.size()); ++k) {
      const int64_t r = index[0].start + k / w, c = index[1].start + k % w;
      v[k] = static_cast<float>((r * shape[1] + c + seed) * 7 % 11 - 5);
    }
    return h;
  });
}

bool close(const HostArray& a, const HostArray& b) {
  if (a.shape() != b.shape()) return false;
  for (size_t i = 0; i < a.data<float>().size(); ++i) {
    const float x = a.data<float>()[i], y = b.data<float>()[i];
    if (std::abs(x - y) > 1e-4f * (1 + std::abs(y))) return false;
  }
  return true;
}

RC_GTEST_PROP(PartitionProperty, RandomProgramsOverRandomShardingsGiveTheUnshardedResult, ()) {
  const std::vector<std::vector<int64_t>> meshes = {{1, 4}, {2, 2}, {4, 1}};
  const auto mesh_shape = *rc::gen::elementOf(meshes);
  const spmd::Mesh mesh(spmd::devices(), mesh_shape, {"a", "b"});
  // Sizes that divide the mesh's axes evenly and sizes that do not (padded blocks).
  const std::vector<int64_t> sizes = {4, 8, 3, 5, 6};
  const Shape shape = {*rc::gen::elementOf(sizes), *rc::gen::elementOf(sizes)};
  const auto steps = *rc::gen::container<std::vector<OpChoice>>(
      *rc::gen::inRange(1, 7),
      rc::gen::build<OpChoice>(rc::gen::set(&OpChoice::kind, rc::gen::inRange(0, 8)),
                               rc::gen::set(&OpChoice::a, rc::gen::inRange(0, 8)),
                               rc::gen::set(&OpChoice::b, rc::gen::inRange(0, 8)),
                               rc::gen::set(&OpChoice::attr, rc::gen::inRange(0, 8))));
  const auto all = specs();
  const P spec_x = *rc::gen::elementOf(all), spec_y = *rc::gen::elementOf(all);
  auto program = spmd::jit([&](const Tensor& x, const Tensor& y) {
    std::vector<Tensor> v = {x, y};
    for (const OpChoice& c : steps) v.push_back(apply(c, v, mesh));
    return v.back();
  });
  const NamedSharding whole(mesh, P());
  const HostArray want = program(make(shape, whole, 0), make(shape, whole, 1)).to_host();
  const Array got = program(make(shape, NamedSharding(mesh, spec_x), 0),
                            make(shape, NamedSharding(mesh, spec_y), 1));
  RC_ASSERT(close(got.to_host(), want));
}

// x at real points (float64): `offset` moves them so that no two elements tie.
Array real_points(const Shape& shape, const NamedSharding& sharding, double offset) {
  return spmd::make_array_from_callback(shape, sharding, [&](const spmd::Index& index) {
    const Shape extents = {index[0].stop - index[0].start, index[1].stop - index[1].start};
    HostArray h = HostArray::zeros(DType::kFloat64, extents);
    auto v = h.mutable_data<double>();
    for (int64_t k = 0; k < static_cast<int64_t>(v.size()); ++k) {
      const int64_t r = index[0].start + k / extents[1], c = index[1].start + k % extents[1];
      v[k] = std::sin(static_cast<double>(r * shape[1] + c) * 1.3 + offset) * 2.0;
    }
    return h;
  });
}

RC_GTEST_PROP(PartitionProperty, GradientsOfRandomProgramsMatchFiniteDifferencesUnderAnySharding,
              ()) {
  const std::vector<std::vector<int64_t>> meshes = {{1, 4}, {2, 2}, {4, 1}};
  const spmd::Mesh mesh(spmd::devices(), *rc::gen::elementOf(meshes), {"a", "b"});
  // Even splits, and uneven ones whose padding must not reach a gradient (2 over 4 devices
  // leaves two devices only padding).
  const Shape shape = *rc::gen::elementOf(std::vector<Shape>{{4, 4}, {5, 3}, {3, 6}, {2, 5}});
  const auto steps = *rc::gen::container<std::vector<OpChoice>>(
      *rc::gen::inRange(1, 5),
      rc::gen::build<OpChoice>(rc::gen::set(&OpChoice::kind, rc::gen::inRange(0, 8)),
                               rc::gen::set(&OpChoice::a, rc::gen::inRange(0, 8)),
                               rc::gen::set(&OpChoice::b, rc::gen::inRange(0, 8)),
                               rc::gen::set(&OpChoice::attr, rc::gen::inRange(0, 8))));
  // Never 0: element 0 is sin(offset) · 2, and an exact zero sits on relu's kink, where the
  // central difference (half the slope) and the derivative (jax.nn.relu's 0) rightly differ.
  const double offset = *rc::gen::inRange(1, 1000) * 0.001;
  const auto all = specs();
  const P spec_x = *rc::gen::elementOf(all);
  auto loss = [&](const Tensor& x, const Tensor& y) {
    std::vector<Tensor> v = {x, y};
    for (const OpChoice& c : steps) v.push_back(apply(c, v, mesh));
    const Tensor out = v.back();
    const Tensor w =
        jnp::reshape(jnp::astype(jnp::arange(out.size()), DType::kFloat64), out.shape());
    return jnp::sum(out * (w * 0.1 + 0.3));
  };
  const NamedSharding whole(mesh, P());
  const Array y = real_points(shape, whole, 0.5);
  const HostArray g =
      spmd::jit(spmd::grad(loss))(real_points(shape, NamedSharding(mesh, spec_x), offset), y)
          .to_host();
  auto f = spmd::jit(loss);
  const HostArray x0 = real_points(shape, whole, offset).to_host();
  const double h = 1e-6;
  for (int64_t i = 0; i < spmd::shape_size(shape); ++i) {
    auto at = [&](double delta) {
      HostArray moved = x0;
      moved.mutable_data<double>()[i] += delta;
      const Array a =
          spmd::make_array_from_callback(shape, whole, [&](const spmd::Index&) { return moved; });
      return f(a, y).to_host().data<double>()[0];
    };
    const double numeric = (at(h) - at(-h)) / (2 * h);
    RC_ASSERT(std::abs(g.data<double>()[i] - numeric) <= 1e-4 * (1 + std::abs(numeric)));
  }
}

TEST(GradPartition, ADataParallelGradientIsReducedAcrossTheBatchAndLaidOutAsItsParameter) {
  const spmd::Mesh mesh(spmd::devices(), {4, 1}, {"dp", "mp"});
  const NamedSharding batch(mesh, P("dp")), replicated(mesh, P());
  spmd::Tree<Array> params{{"w", real_points({3, 2}, replicated, 0.1)}};
  params["b"] = real_points({1, 2}, replicated, 0.2);
  auto loss = [](const spmd::Tree<Tensor>& p, const Tensor& x, const Tensor& y) {
    const Tensor d = jnp::matmul(x, p.at("w").leaf()) + p.at("b").leaf() - y;
    return jnp::mean(d * d);
  };
  auto step = spmd::jit([&](const spmd::Tree<Tensor>& p, const Tensor& x, const Tensor& y) {
    return spmd::grad(loss)(p, x, y);
  });
  const Array x = real_points({8, 3}, batch, 0.3), y = real_points({8, 2}, batch, 0.4);
  const spmd::Tree<Array> grads = step(params, x, y);
  const spmd::Tree<Array> whole =
      step(params, real_points({8, 3}, replicated, 0.3), real_points({8, 2}, replicated, 0.4));
  for (const char* key : {"w", "b"}) {
    EXPECT_EQ(grads.at(key).leaf().sharding().to_string(), replicated.to_string()) << key;
    const HostArray got = grads.at(key).leaf().to_host(), want = whole.at(key).leaf().to_host();
    for (size_t i = 0; i < got.data<double>().size(); ++i) {
      EXPECT_NEAR(got.data<double>()[i], want.data<double>()[i], 1e-12) << key << " " << i;
    }
  }
  const std::string text = step.lower(params, x, y).as_text();
  EXPECT_NE(text.find("= psum[dp]"), std::string::npos) << text;
}

TEST(JitPropagation, OutShardingsReachBackToValuesComputedFromReplicatedOperands) {
  const spmd::Mesh mesh(spmd::devices(), {4, 1}, {"a", "b"});
  const Array x = make({8, 4}, NamedSharding(mesh, P()), 0);
  const Array b = make({1, 4}, NamedSharding(mesh, P()), 1);
  auto fn = spmd::jit(
      [](const Tensor& t, const Tensor& bias) { return jnp::transpose(jnp::exp(t * 0.5f) + bias); },
      {.out_shardings = {NamedSharding(mesh, P(spmd::None, "a"))}});
  const std::string text = fn.lower(x, b).as_text();
  // Each device computes its two rows only: the chain runs on f32[2,4], nothing is gathered.
  EXPECT_NE(text.find("fused f32[2,4]"), std::string::npos) << text;
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  auto whole = spmd::jit([](const Tensor& t, const Tensor& bias) {
    return jnp::transpose(jnp::exp(t * 0.5f) + bias);
  });
  EXPECT_TRUE(close(fn(x, b).to_host(), whole(x, b).to_host()));
  EXPECT_EQ(fn(x, b).sharding().to_string(), NamedSharding(mesh, P(spmd::None, "a")).to_string());
}

TEST(JitErrors, AConstraintOnAnotherMeshIsRefused) {
  const spmd::Mesh mesh(spmd::devices(), {4, 1}, {"a", "b"});
  const spmd::Mesh other(spmd::devices(), {2, 2}, {"a", "b"});
  const Array x = make({8, 4}, NamedSharding(mesh, P("a")), 0);
  auto fn = spmd::jit([&](const Tensor& t) {
    return spmd::lax::with_sharding_constraint(t, NamedSharding(other, P()));
  });
  EXPECT_THROW(fn(x), spmd::InvalidArgument);
  EXPECT_THROW(NamedSharding(mesh, P("c")), spmd::InvalidArgument);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = 4});
  const int result = RUN_ALL_TESTS();
  spmd::distributed::shutdown();
  return result;
}
