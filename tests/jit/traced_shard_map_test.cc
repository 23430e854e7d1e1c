// lax::shard_map inside jit on 4 CPU devices: psum and pmean across blocks, gradients through
// them equal to the global function's (psum's transpose the identity, no double counting along an
// axis the loss does not vary over), seed 002's explicit pmean of per-device gradients, and the
// errors. Part of jit_property_test (its main initializes the devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <string>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::None;
using spmd::P;
using spmd::Tensor;

const spmd::Mesh& mesh() {
  static const spmd::Mesh m(spmd::devices(), {2, 2}, {"dp", "mp"});
  return m;
}

// Float64 values that differ everywhere, laid out as `spec`.
Array values(const spmd::Shape& shape, const spmd::PartitionSpec& spec, double seed) {
  std::vector<double> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed * 7.3 + static_cast<double>(i) * 1.1);
  const HostArray whole = HostArray::from_vector(v, shape);
  return spmd::device_put(whole, NamedSharding(mesh(), spec));
}

void expect_close(const Array& got, const Array& want, double tol = 1e-12) {
  const HostArray g = spmd::multihost::process_allgather(got);
  const HostArray w = spmd::multihost::process_allgather(want);
  ASSERT_EQ(g.shape(), w.shape());
  for (size_t i = 0; i < g.data<double>().size(); ++i) {
    EXPECT_NEAR(g.data<double>()[i], w.data<double>()[i], tol) << "element " << i;
  }
}

Tensor squared_error(const Tensor& w, const Tensor& x, const Tensor& y) {
  const Tensor d = jnp::matmul(x, w) - y;
  return d * d;
}

TEST(TracedShardMap, PsumAndPmeanReduceAcrossTheNamedAxes) {
  const Array x = values({8, 4}, P("dp", "mp"), 1);
  auto f = spmd::jit([](const Tensor& t) {
    return spmd::lax::shard_map(
        [](const Tensor& b) {
          return std::vector<Tensor>{spmd::lax::psum(jnp::sum(b), {"dp", "mp"}),
                                     spmd::lax::pmean(jnp::sum(b, {0}), "dp")};
        },
        mesh(), {P("dp", "mp")}, {P(), P("mp")})(t);
  });
  auto g = spmd::jit([](const Tensor& t) {
    return std::vector<Tensor>{jnp::sum(t), jnp::sum(t, {0}) / 2.0};
  });
  const auto got = f(x), want = g(x);
  expect_close(got[0], want[0]);
  expect_close(got[1], want[1]);
  EXPECT_EQ(got[1].sharding().to_string(), NamedSharding(mesh(), P("mp")).to_string());
  const std::string text = f.lower(x).as_text();
  EXPECT_NE(text.find("psum[dp,mp]"), std::string::npos) << text;
  EXPECT_NE(text.find("psum[dp]"), std::string::npos) << text;
}

// The gradient of a pmean'ed per-device loss is the global mean loss's gradient: on a 2×2 mesh
// the loss varies over dp only, so w's cotangent is summed over dp and not over mp.
TEST(TracedShardMap, TheGradientThroughPmeanIsTheGlobalGradient) {
  const Array w = values({3, 2}, P(), 2), x = values({8, 3}, P("dp"), 3),
              y = values({8, 2}, P("dp"), 4);
  auto per_device = [](const Tensor& w, const Tensor& x, const Tensor& y) {
    return spmd::lax::shard_map(
        [](const Tensor& wb, const Tensor& xb, const Tensor& yb) {
          return spmd::lax::pmean(jnp::mean(squared_error(wb, xb, yb)), "dp");
        },
        mesh(), {P(), P("dp"), P("dp")}, P())(w, x, y);
  };
  auto global = [](const Tensor& w, const Tensor& x, const Tensor& y) {
    return jnp::mean(squared_error(w, x, y));
  };
  auto both = spmd::jit([&](const Tensor& w, const Tensor& x, const Tensor& y) {
    auto [value, g] = spmd::value_and_grad(per_device)(w, x, y);
    auto [want_value, want_g] = spmd::value_and_grad(global)(w, x, y);
    return std::vector<Tensor>{value, g, want_value, want_g};
  });
  const auto out = both(w, x, y);
  expect_close(out[0], out[2]);
  expect_close(out[1], out[3]);
}

// Model-parallel: w split by columns over mp, y by rows and columns; the loss a psum over both.
TEST(TracedShardMap, AModelParallelGradientKeepsItsSplitAndIsTheGlobalGradient) {
  const Array w = values({3, 4}, P(None, "mp"), 5), x = values({8, 3}, P("dp"), 6),
              y = values({8, 4}, P("dp", "mp"), 7);
  auto per_device = [](const Tensor& w, const Tensor& x, const Tensor& y) {
    return spmd::lax::shard_map(
        [](const Tensor& wb, const Tensor& xb, const Tensor& yb) {
          return spmd::lax::psum(jnp::sum(squared_error(wb, xb, yb)), {"dp", "mp"}) / 32.0;
        },
        mesh(), {P(None, "mp"), P("dp"), P("dp", "mp")}, P())(w, x, y);
  };
  auto global = [](const Tensor& w, const Tensor& x, const Tensor& y) {
    return jnp::mean(squared_error(w, x, y));
  };
  auto grads = spmd::jit([&](const Tensor& w, const Tensor& x, const Tensor& y) {
    return std::vector<Tensor>{spmd::grad(per_device)(w, x, y), spmd::grad(global)(w, x, y)};
  });
  const auto out = grads(w, x, y);
  expect_close(out[0], out[1]);
  EXPECT_EQ(out[0].sharding().to_string(), w.sharding().to_string());
}

// psum's transpose is the identity: d/dx Σ psum(b²) is 2x, not 2x times the axis size.
TEST(TracedShardMap, PsumsTransposeIsTheIdentity) {
  const Array x = values({8}, P("dp"), 8);
  auto f = [](const Tensor& t) {
    return jnp::sum(spmd::lax::shard_map(
        [](const Tensor& b) { return spmd::lax::psum(b * b, "dp"); }, mesh(), {P("dp")}, P())(t));
  };
  auto g = spmd::jit([&](const Tensor& t) {
    return std::vector<Tensor>{spmd::grad(f)(t), t * 2.0};
  });
  const auto out = g(x);
  expect_close(out[0], out[1]);
}

// Seed 002's train_step inside a shard_map: each device's gradient, pmean'ed over the batch axis,
// then the update. With check_vma = false (pmap's semantics) the gradient is each device's own,
// so the step is the global mean gradient's. With check_vma (JAX's default) the gradient of the
// replicated w is already summed over the 2 devices of "dp", and pmean of that invariant sum is
// the sum: the step is the global step with twice the learning rate.
TEST(TracedShardMap, SeedTwoExplicitPmeanOfPerDeviceGradients) {
  const Array w = values({3, 2}, P(), 9), x = values({8, 3}, P("dp"), 10),
              y = values({8, 2}, P("dp"), 11);
  auto loss_fn = [](const Tensor& w, const Tensor& x, const Tensor& y) {
    return jnp::mean(squared_error(w, x, y));
  };
  auto step_with = [&](bool check_vma) {
    return spmd::jit([&, check_vma](const Tensor& w, const Tensor& x, const Tensor& y) {
      return spmd::lax::shard_map(
          [&](const Tensor& wb, const Tensor& xb, const Tensor& yb) {
            const Tensor grads = spmd::lax::pmean(spmd::grad(loss_fn)(wb, xb, yb), "dp");
            return wb - 0.1 * grads;
          },
          mesh(), {P(), P("dp"), P("dp")}, P(), {.check_vma = check_vma})(w, x, y);
    });
  };
  auto global_step = [&](double lr) {
    return spmd::jit([&, lr](const Tensor& w, const Tensor& x, const Tensor& y) {
      return w - lr * spmd::grad(loss_fn)(w, x, y);
    });
  };
  expect_close(step_with(false)(w, x, y), global_step(0.1)(w, x, y));
  expect_close(step_with(true)(w, x, y), global_step(0.2)(w, x, y));
}

TEST(TracedShardMap, MisuseIsRefusedClearly) {
  const Array x = values({8, 4}, P("dp"), 12);
  auto message = [&](const std::function<Tensor(const Tensor&)>& fn) -> std::string {
    try {
      spmd::jit(fn)(x);
    } catch (const spmd::InvalidArgument& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string captured = message([](const Tensor& t) {
    return spmd::lax::shard_map([&](const Tensor& b) { return b + jnp::sum(t); }, mesh(), {P("dp")},
                                P("dp"))(t);
  });
  EXPECT_NE(captured.find("uses %0 (parameter f64[8,4]) of the enclosing function"),
            std::string::npos)
      << captured;
  const std::string varying = message([](const Tensor& t) {
    return spmd::lax::shard_map([](const Tensor& b) { return jnp::sum(b); }, mesh(), {P("dp")},
                                P())(t);
  });
  EXPECT_NE(varying.find("result 0 varies over mesh axes (dp) but its out_spec PartitionSpec()"),
            std::string::npos)
      << varying;
  const std::string outside = message([](const Tensor& t) { return spmd::lax::psum(t, "dp"); });
  EXPECT_NE(outside.find("psum: unbound axis name: dp (a collective runs inside a shard_map"),
            std::string::npos)
      << outside;
  const std::string unknown = message([](const Tensor& t) {
    return spmd::lax::shard_map([](const Tensor& b) { return spmd::lax::psum(b, "tp"); }, mesh(),
                                {P("dp")}, P("dp"))(t);
  });
  EXPECT_NE(unknown.find("tp"), std::string::npos) << unknown;
  const std::string nested = message([](const Tensor& t) {
    return spmd::lax::shard_map(
        [](const Tensor& b) {
          return spmd::lax::shard_map([](const Tensor& c) { return c; }, mesh(), {P()}, P())(b);
        },
        mesh(), {P("dp")}, P("dp"))(t);
  });
  EXPECT_NE(nested.find("inside another one's function"), std::string::npos) << nested;
  EXPECT_THROW(spmd::jit([](const Tensor& t) {
                 return spmd::lax::shard_map([](const Tensor& b) { return b; }, mesh(),
                                             {P("dp", "mp")}, P("dp", "mp"))(jnp::zeros({3, 4}));
               })(x),
               spmd::IndivisibleError);
}

}  // namespace
