// Uneven splits under jit (jit/layout.h): a dimension that does not divide over its mesh axes runs
// in padded blocks, as XLA tiles it (10 over 4 devices: 3, 3, 3, 1), and every operation family
// gives the result of the same program on whole (replicated) arrays. Values are small integers,
// so that sums in any order are exact and a result equal to the whole-array one is equal bit for
// bit. Before the rules that read along a split dimension, the padding holds something nonzero
// (x - 1 of the zeros an input is padded with), so that a leak shows. Part of
// jit_property_test (its main initializes 4 CPU devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
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

const spmd::Mesh& line() {
  static const spmd::Mesh m(spmd::devices(), {4}, {"x"});
  return m;
}

const spmd::Mesh& grid() {
  static const spmd::Mesh m(spmd::devices(), {2, 2}, {"a", "b"});
  return m;
}

// Small integers, -5 … 5, as float32 (or `dtype`), laid out as `sharding`.
Array integers(const Shape& shape, const NamedSharding& sharding, int seed,
               DType dtype = DType::kFloat32) {
  std::vector<float> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + seed) % 11) - 5.0f;
  const Array x = spmd::device_put(HostArray::from_vector(v, shape), sharding);
  return dtype == DType::kFloat32 ? x : jnp::astype(x, dtype);
}

// The bytes of a whole result, to compare bit for bit.
std::vector<std::byte> bytes(const Array& a) {
  const HostArray h = a.to_host();
  return {h.bytes().begin(), h.bytes().end()};
}

using Fn1 = std::function<Tensor(const Tensor&)>;

// fn on x laid out as `spec` on `mesh` equals fn on x whole (bit for bit, or for `rounding`
// within 1e-6 relative: a sum of non-integers in another order), and returns the split result.
Array expect_as_whole(const Fn1& fn, const Shape& shape, const spmd::Mesh& mesh, const P& spec,
                      bool rounding = false) {
  auto f = spmd::jit(fn);
  const Array split = f(integers(shape, NamedSharding(mesh, spec), 0));
  const Array whole = f(integers(shape, NamedSharding(mesh, P()), 0));
  EXPECT_EQ(split.shape(), whole.shape());
  if (!rounding) {
    EXPECT_EQ(bytes(split), bytes(whole)) << "under " << spec.to_string();
    return split;
  }
  const HostArray a = split.to_host(), b = whole.to_host();
  for (size_t i = 0; i < b.data<float>().size(); ++i) {
    const float x = a.data<float>()[i], y = b.data<float>()[i];
    EXPECT_NEAR(x, y, 1e-6f * std::max(1.0f, std::abs(y))) << "under " << spec.to_string();
  }
  return split;
}

// The extents of each addressable shard along `dim`.
std::vector<int64_t> shard_lengths(const Array& a, size_t dim) {
  std::vector<int64_t> out;
  for (const auto& s : a.addressable_shards()) out.push_back(s.data.shape()[dim]);
  return out;
}

TEST(Uneven, TheSumOfXTimesTwoOverTenElementsOnFourDevicesRuns) {
  // The case: it failed with "cannot be split evenly" before.
  const Array y = expect_as_whole([](const Tensor& x) { return x * 2.0f; }, {10}, line(), P("x"));
  EXPECT_EQ(shard_lengths(y, 0), (std::vector<int64_t>{3, 3, 3, 1}));  // XLA's tiling
  EXPECT_EQ(y.sharding().to_string(), NamedSharding(line(), P("x")).to_string());
  expect_as_whole([](const Tensor& x) { return jnp::sum(x * 2.0f); }, {10}, line(), P("x"));
}

TEST(Uneven, PaddingNeverReachesAReduction) {
  struct Reduction {
    const char* name;
    Fn1 fn;
    bool rounding = false;  // sums exponentials: not integers
  };
  const std::vector<Reduction> reductions = {
      {"sum", [](const Tensor& x) { return jnp::sum(x - 1.0f, {0}); }},
      {"sum of all", [](const Tensor& x) { return jnp::sum(x - 1.0f); }},
      {"mean", [](const Tensor& x) { return jnp::mean(x - 1.0f, {0}); }},
      {"max", [](const Tensor& x) { return jnp::max(x - 20.0f, {0}); }},
      {"min", [](const Tensor& x) { return jnp::min(x + 20.0f, {0}); }},
      {"argmax", [](const Tensor& x) { return jnp::argmax(x - 20.0f, 0); }},
      {"logsumexp", [](const Tensor& x) { return jnp::logsumexp(x - 20.0f, {0}); }, true},
      {"softmax", [](const Tensor& x) { return jnp::softmax(x - 20.0f, 0); }, true},
  };
  for (const Reduction& r : reductions) {
    SCOPED_TRACE(r.name);
    expect_as_whole(r.fn, {10, 6}, line(), P("x"), r.rounding);
    expect_as_whole(r.fn, {5, 7}, grid(), P("a", "b"), r.rounding);
    expect_as_whole(r.fn, {2, 3}, line(), P("x"), r.rounding);  // two devices: only padding
  }
}

TEST(Uneven, PaddingNeverReachesAContraction) {
  auto f = spmd::jit([](const Tensor& a, const Tensor& b) {
    return jnp::matmul(a - 1.0f, b + 1.0f);  // the padding is -1 and 1 unless filled
  });
  const Array whole = f(integers({6, 10}, NamedSharding(line(), P()), 0),
                        integers({10, 3}, NamedSharding(line(), P()), 1));
  const Array a = integers({6, 10}, NamedSharding(line(), P(spmd::None, "x")), 0);
  const Array b = integers({10, 3}, NamedSharding(line(), P("x")), 1);
  EXPECT_EQ(bytes(f(a, b)), bytes(whole));
  const std::string text = f.lower(a, b).as_text();
  EXPECT_NE(text.find("fill_padding"), std::string::npos) << text;
  EXPECT_NE(text.find("psum[x]"), std::string::npos) << text;  // contracted where it lies
  auto e = spmd::jit([](const Tensor& a, const Tensor& b) {
    return jnp::einsum("bik,bkj->bij", a - 1.0f, b + 1.0f);
  });
  const Array batched = e(integers({5, 3, 7}, NamedSharding(grid(), P("a", spmd::None, "b")), 2),
                          integers({5, 7, 2}, NamedSharding(grid(), P("a", "b")), 3));
  EXPECT_EQ(bytes(batched), bytes(e(integers({5, 3, 7}, NamedSharding(grid(), P()), 2),
                                    integers({5, 7, 2}, NamedSharding(grid(), P()), 3))));
}

TEST(Uneven, LayoutOperationsKeepOrGatherAnUnevenDimension) {
  expect_as_whole([](const Tensor& x) { return jnp::transpose(x - 1.0f); }, {10, 6}, line(),
                  P("x"));
  expect_as_whole(
      [](const Tensor& x) {
        return jnp::reshape(x, {10, 2, 3});
      },
      {10, 6}, line(), P("x"));
  expect_as_whole([](const Tensor& x) { return jnp::reshape(x - 1.0f, {60}); }, {10, 6}, line(),
                  P("x"));
  expect_as_whole(
      [](const Tensor& x) {
        return jnp::slice(x, {2, 0}, {9, 6});
      },
      {10, 6}, line(), P("x"));
  expect_as_whole(
      [](const Tensor& x) {
        return jnp::concatenate({x, x - 1.0f}, 0);
      },
      {10, 6}, line(), P("x"));
  expect_as_whole(
      [](const Tensor& x) {
        return jnp::broadcast_to(jnp::sum(x, {0}, true), {10, 6});
      },
      {10, 6}, line(), P("x"));
  // A reshape that keeps the uneven dimension as it is stays split: nothing gathered.
  auto keep = spmd::jit([](const Tensor& x) { return jnp::reshape(x, {10, 2, 3}); });
  const std::string text =
      keep.lower(integers({10, 6}, NamedSharding(line(), P("x")), 0)).as_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
}

TEST(Uneven, EveryReshardBetweenLayoutsDropsOrAddsPaddingWhereItShould) {
  const Shape shape = {10, 7};
  const std::vector<P> specs = {P(), P("x"), P(spmd::None, "x")};
  for (const P& from : specs) {
    for (const P& to : specs) {
      SCOPED_TRACE(from.to_string() + " -> " + to.to_string());
      const Array y = expect_as_whole(
          [&to](const Tensor& x) {
            return spmd::lax::with_sharding_constraint(x - 1.0f, NamedSharding(line(), to));
          },
          shape, line(), from);
      EXPECT_EQ(y.sharding().to_string(), NamedSharding(line(), to).to_string());
    }
  }
  // A pending sum scattered onto an uneven dimension (psum_scatter of a padded part).
  auto scatter = spmd::jit([](const Tensor& a, const Tensor& b) { return jnp::matmul(a, b); },
                           {.out_shardings = {NamedSharding(line(), P(spmd::None, "x"))}});
  const Array a = integers({6, 8}, NamedSharding(line(), P(spmd::None, "x")), 0);
  const Array b = integers({8, 10}, NamedSharding(line(), P("x")), 1);
  const std::string text = scatter.lower(a, b).as_text();
  EXPECT_NE(text.find("psum_scatter"), std::string::npos) << text;
  const Array got = scatter(a, b);
  EXPECT_EQ(shard_lengths(got, 1), (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(bytes(got), bytes(scatter(integers({6, 8}, NamedSharding(line(), P()), 0),
                                      integers({8, 10}, NamedSharding(line(), P()), 1))));
}

TEST(Uneven, IntegerExtremesStayTheExtremes) {
  // int64's largest is no double: the padding of a min takes it exactly.
  constexpr int64_t kTop = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> v(10);
  for (size_t i = 0; i < v.size(); ++i) v[i] = kTop - static_cast<int64_t>(i);
  const HostArray host = HostArray::from_vector(v, {10});
  auto f = spmd::jit([](const Tensor& x) { return jnp::min(x); });
  auto g = spmd::jit([](const Tensor& x) { return jnp::max(jnp::negative(x)); });
  const Array split = spmd::device_put(host, NamedSharding(line(), P("x")));
  EXPECT_EQ(f(split).to_host().data<int64_t>()[0], kTop - 9);
  EXPECT_EQ(g(split).to_host().data<int64_t>()[0], -(kTop - 9));
}

TEST(Uneven, GradientsOfAnUnevenBatchAreTheWholeBatchs) {
  auto loss = [](const Tensor& w, const Tensor& x, const Tensor& y) {
    const Tensor d = jnp::matmul(jnp::tanh(x) + 1.0, w) - y;  // padding rows: sum(w), unless filled
    return jnp::mean(d * d);
  };
  auto step = spmd::jit(spmd::grad(loss));
  const NamedSharding whole(line(), P()), rows(line(), P("x"));
  const Array w = integers({3, 2}, whole, 0, DType::kFloat64);
  const HostArray got = step(w, integers({10, 3}, rows, 1, DType::kFloat64),
                             integers({10, 2}, rows, 2, DType::kFloat64))
                            .to_host();
  const HostArray want = step(w, integers({10, 3}, whole, 1, DType::kFloat64),
                              integers({10, 2}, whole, 2, DType::kFloat64))
                             .to_host();
  ASSERT_EQ(got.shape(), want.shape());
  for (size_t i = 0; i < got.data<double>().size(); ++i) {
    EXPECT_NEAR(got.data<double>()[i], want.data<double>()[i], 1e-12) << i;
  }
  // The gradient of an uneven input is laid out as the input, its padding cut away.
  auto dx = spmd::jit(spmd::grad([](const Tensor& x) { return jnp::sum(jnp::tanh(x) * 3.0); }));
  const Array g = dx(integers({10, 3}, rows, 1, DType::kFloat64));
  EXPECT_EQ(shard_lengths(g, 0), (std::vector<int64_t>{3, 3, 3, 1}));
}

TEST(Uneven, RandomSamplesOverAnUnevenSplitAreTheWholeOnes) {
  auto draw = spmd::jit(
      [](const Tensor& key) {
        return spmd::random::normal(key, {10, 3});
      },
      {.out_shardings = {NamedSharding(line(), P("x"))}});
  const Array key = spmd::device_put(spmd::random::PRNGKey(3), NamedSharding(line(), P()));
  const Array split = draw(key);
  EXPECT_EQ(shard_lengths(split, 0), (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(bytes(split), bytes(spmd::random::normal(spmd::random::PRNGKey(3), {10, 3})));
}

TEST(Uneven, ShardMapStillRefusesAnUnevenSplitAsJaxDoes) {
  // shard_map's function sees blocks of one shape on every device: JAX refuses uneven ones too.
  auto f = spmd::shard_map([](const spmd::Block& b) { return b; }, line(), {P("x")}, P("x"));
  EXPECT_THROW(f(integers({10}, NamedSharding(line(), P("x")), 0)), spmd::IndivisibleError);
}

}  // namespace
