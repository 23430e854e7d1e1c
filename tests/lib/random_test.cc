// spmd::random on 4 CPU devices: Threefry-2x32's known answers (Random123's, as JAX's tests
// quote them), JAX's split/fold_in symmetry, sharded bits under jit equal to the unsharded ones
// with no collective in the program, and the errors. Values against JAX itself:
// random_jax_test.py. Part of jit_property_test (its main initializes the devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "kernels/random_bits.h"

namespace {

namespace random = spmd::random;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;

const spmd::Mesh& random_mesh() {
  static const spmd::Mesh m(spmd::devices(), {2, 2}, {"a", "b"});
  return m;
}

// The values' 32-bit words (a float32's bit pattern), to compare bit for bit.
std::vector<uint32_t> words(const Array& a) {
  const HostArray h = spmd::multihost::process_allgather(a);
  std::vector<uint32_t> out(h.nbytes() / sizeof(uint32_t));
  std::memcpy(out.data(), h.bytes().data(), out.size() * sizeof(uint32_t));
  return out;
}

// What `f` throws as InvalidArgument, or "no error".
std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const spmd::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

// Random123's known answers for threefry2x32 with 20 rounds (kat_vectors), which JAX's
// random_test.py checks its hash against.
TEST(Random, Threefry2x32GivesRandom123sKnownAnswers) {
  using A = std::array<uint32_t, 2>;
  EXPECT_EQ(spmd::kernels::threefry_2x32({0, 0}, {0, 0}), (A{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(spmd::kernels::threefry_2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (A{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(spmd::kernels::threefry_2x32({0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}),
            (A{0xc4923a9c, 0x483df7a0}));
}

TEST(Random, PRNGKeyHoldsTheSeedAsJaxDoes) {
  EXPECT_EQ(words(random::PRNGKey(42)), (std::vector<uint32_t>{0, 42}));
  EXPECT_EQ(words(random::PRNGKey(-1)), (std::vector<uint32_t>{0, 0xffffffff}));
  EXPECT_EQ(words(random::PRNGKey(int64_t{1} << 40)), (std::vector<uint32_t>{256, 0}));
}

// JAX's test_threefry_split_fold_in_symmetry.
TEST(Random, FoldInEqualsTheSplitKeyOfThatIndex) {
  const Array key = random::PRNGKey(72);
  const std::vector<uint32_t> split = words(random::split(key, 3));
  for (uint32_t i = 0; i < 3; ++i) {
    const std::vector<uint32_t> folded = words(random::fold_in(key, i));
    EXPECT_EQ(folded, (std::vector<uint32_t>{split[size_t{2} * i], split[size_t{2} * i + 1]})) << i;
  }
}

// The data is a value: a jit folding in its argument traces once for every step, and gives
// what the eager form gives.
TEST(Random, FoldInDataIsAValueNotPartOfTheProgram) {
  const Array key = random::PRNGKey(7);
  int traces = 0;
  auto f = spmd::jit([&traces](const Tensor& k, const Tensor& step) {
    ++traces;
    return random::fold_in(k, step);
  });
  for (uint32_t step : {0u, 1u, 1000u, 4000000000u}) {
    const Array s =
        spmd::device_put(HostArray::from_vector(std::vector<uint32_t>{step}, {}), key.sharding());
    EXPECT_EQ(words(f(key, s)), words(random::fold_in(key, step))) << step;
  }
  EXPECT_EQ(traces, 1);
}

TEST(Random, BitsUnderJitEqualTheEagerOnesWhateverTheShardingWithoutCommunication) {
  const Array key = spmd::device_put(random::PRNGKey(1701), NamedSharding(random_mesh(), P()));
  const std::vector<uint32_t> eager = words(random::bits(random::PRNGKey(1701), {8, 6}));
  for (const P& spec :
       {P(), P("a"), P(spmd::None, "b"), P("a", "b"), P("b", "a"), P(spmd::Axes{"a", "b"})}) {
    SCOPED_TRACE(spec.to_string());
    auto f = spmd::jit(
        [](const Tensor& k) {
          return random::bits(k, {8, 6});
        },
        {.out_shardings = {NamedSharding(random_mesh(), spec)}});
    const std::string text = f.lower(key).as_text();
    for (const char* collective : {"psum", "all_gather", "all_to_all", "pmax", "local_slice"}) {
      EXPECT_EQ(text.find(collective), std::string::npos) << text;
    }
    const Array out = f(key);
    EXPECT_EQ(out.sharding().to_string(), NamedSharding(random_mesh(), spec).to_string());
    EXPECT_EQ(words(out), eager);
  }
}

TEST(Random, EveryWidthIsTheLowBitsOrBothWordsAsJaxConverts) {
  const Array key = random::PRNGKey(1701);
  const HostArray b8 = random::bits(key, {5}, DType::kUInt8).to_host();
  const HostArray b16 = random::bits(key, {5}, DType::kUInt16).to_host();
  const HostArray b32 = random::bits(key, {5}).to_host();
  const HostArray b64 = random::bits(key, {5}, DType::kUInt64).to_host();
  const HostArray pairs = random::split(key, 5).to_host();
  for (size_t i = 0; i < 5; ++i) {
    const uint32_t y0 = pairs.data<uint32_t>()[2 * i], y1 = pairs.data<uint32_t>()[2 * i + 1];
    EXPECT_EQ(b32.data<uint32_t>()[i], y0 ^ y1);
    EXPECT_EQ(b16.data<uint16_t>()[i], static_cast<uint16_t>(y0 ^ y1));
    EXPECT_EQ(b8.data<uint8_t>()[i], static_cast<uint8_t>(y0 ^ y1));
    EXPECT_EQ(b64.data<uint64_t>()[i], uint64_t{y0} << 32 | y1);
  }
}

TEST(Random, BadArgumentsAreClearErrors) {
  const Array key = random::PRNGKey(0);
  try {
    random::bits(key, {3}, DType::kFloat32);
    ADD_FAILURE() << "float bits";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("must be an unsigned integer type"), std::string::npos)
        << e.what();
  }
  const Array two_keys = random::split(key, 2);
  try {
    random::bits(two_keys, {3});
    ADD_FAILURE() << "a batch of keys";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("one raw key, uint32[2]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("u32[2,2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(random::split(key, -1), spmd::InvalidArgument);
}

template <class T>
std::vector<T> values(const Array& a) {
  const HostArray h = spmd::multihost::process_allgather(a);
  const auto d = h.data<T>();
  return {d.begin(), d.end()};
}

void expect_no_collective(const std::string& text) {
  for (const char* collective : {"psum", "all_gather", "all_to_all", "pmax", "local_slice"}) {
    EXPECT_EQ(text.find(collective), std::string::npos) << text;
  }
}

// Each sampler, sharded under jit, computes its own block: the same values as the eager call,
// and no collective.
TEST(Random, SamplersUnderJitEqualTheEagerOnesWhateverTheShardingWithoutCommunication) {
  const Array host_key = random::PRNGKey(7);
  const Array key = spmd::device_put(host_key, NamedSharding(random_mesh(), P()));
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> traced;
    std::function<Array(const Array&)> eager;
  };
  const Shape shape{6, 10};
  const std::vector<Case> cases = {
      {"uniform",
       [&](const Tensor& k) { return random::uniform(k, shape, DType::kFloat32, -1, 3); },
       [&](const Array& k) { return random::uniform(k, shape, DType::kFloat32, -1, 3); }},
      {"normal", [&](const Tensor& k) { return random::normal(k, shape); },
       [&](const Array& k) { return random::normal(k, shape); }},
      {"truncated_normal",
       [&](const Tensor& k) { return random::truncated_normal(k, -1, 2, shape); },
       [&](const Array& k) { return random::truncated_normal(k, -1, 2, shape); }},
      {"gumbel", [&](const Tensor& k) { return random::gumbel(k, shape); },
       [&](const Array& k) { return random::gumbel(k, shape); }},
      {"exponential", [&](const Tensor& k) { return random::exponential(k, shape); },
       [&](const Array& k) { return random::exponential(k, shape); }},
      {"laplace", [&](const Tensor& k) { return random::laplace(k, shape); },
       [&](const Array& k) { return random::laplace(k, shape); }},
      {"logistic", [&](const Tensor& k) { return random::logistic(k, shape); },
       [&](const Array& k) { return random::logistic(k, shape); }},
      {"cauchy", [&](const Tensor& k) { return random::cauchy(k, shape); },
       [&](const Array& k) { return random::cauchy(k, shape); }},
      {"lognormal", [&](const Tensor& k) { return random::lognormal(k, 0.3, shape); },
       [&](const Array& k) { return random::lognormal(k, 0.3, shape); }},
      {"randint",
       [&](const Tensor& k) {
         return spmd::numpy::astype(random::randint(k, shape, -4, 9), DType::kFloat32);
       },
       [&](const Array& k) {
         return spmd::numpy::astype(random::randint(k, shape, -4, 9), DType::kFloat32);
       }},
  };
  for (const Case& c : cases) {
    const std::vector<float> eager = values<float>(c.eager(host_key));
    for (const P& spec : {P("a"), P(spmd::None, "b"), P("b", "a")}) {
      SCOPED_TRACE(std::string(c.name) + " " + spec.to_string());
      auto f = spmd::jit(c.traced, {.out_shardings = {NamedSharding(random_mesh(), spec)}});
      expect_no_collective(f.lower(key).as_text());
      const Array out = f(key);
      EXPECT_EQ(out.sharding().to_string(), NamedSharding(random_mesh(), spec).to_string());
      EXPECT_EQ(values<float>(out), eager);
    }
  }
}

// JAX's compositions (spmd/random.h): each Array form equals its Tensor form under jit, and
// each keeps to its definition: ±1; beta in [0, 1]; dirichlet's rows summing to 1; points inside
// the unit ball; orthonormal columns or rows; the generalized normal's variance
// Γ(3/p)/Γ(1/p); multivariate_normal with an identity covariance is mean + normal, and lognormal
// with an array of equal sigmas the scalar sampler, bit for bit.
TEST(Random, JaxsCompositionsKeepToTheirDefinitions) {
  namespace jnp = spmd::numpy;
  const Array key = random::PRNGKey(11);
  const auto host = [](std::vector<float> v, const Shape& shape) {
    return spmd::device_put(HostArray::from_vector(std::move(v), shape),
                            spmd::SingleDeviceSharding(spmd::local_devices().front()));
  };
  const auto same_under_jit = [&](const char* name, const Array& eager,
                                  const std::function<Tensor(const Tensor&)>& traced) {
    EXPECT_EQ(words(spmd::jit(traced)(key)), words(eager)) << name;
  };
  const Array r = random::rademacher(key, {4000});
  std::set<int32_t> signs;
  for (int32_t v : values<int32_t>(r)) signs.insert(v);
  EXPECT_EQ(signs, (std::set<int32_t>{-1, 1}));
  same_under_jit("rademacher", r, [](const Tensor& k) { return random::rademacher(k, {4000}); });

  const Array a = host(std::vector<float>(2000, 2.0f), {2000});
  const Array b = host(std::vector<float>(2000, 0.5f), {2000});
  const Array betas = random::beta(key, a, b);
  for (float v : values<float>(betas)) ASSERT_TRUE(v >= 0.0f && v <= 1.0f) << v;
  same_under_jit("beta", betas, [](const Tensor& k) {
    return random::beta(k, jnp::ones({2000}) * 2.0, jnp::ones({2000}) * 0.5);
  });

  const Array alpha = host(std::vector<float>(2000, 0.7f), {500, 4});
  const std::vector<float> d = values<float>(random::dirichlet(key, alpha));
  for (size_t row = 0; row < 500; ++row) {
    const float total = d[4 * row] + d[4 * row + 1] + d[4 * row + 2] + d[4 * row + 3];
    ASSERT_NEAR(total, 1.0f, 1e-5f) << row;
  }

  const std::vector<float> points = values<float>(random::ball(key, 3, 2.0, {1000}));
  ASSERT_EQ(points.size(), 3000u);
  for (size_t i = 0; i < 1000; ++i) {
    const float n2 = points[3 * i] * points[3 * i] + points[3 * i + 1] * points[3 * i + 1] +
                     points[3 * i + 2] * points[3 * i + 2];
    ASSERT_LE(n2, 1.0f + 1e-5f) << i;
  }
  same_under_jit("ball", random::ball(key, 3, 1.5, {20}),
                 [](const Tensor& k) { return random::ball(k, 3, 1.5, {20}); });

  const std::vector<float> g = values<float>(random::generalized_normal(key, 2.0, {40000}));
  double square = 0;
  for (float v : g) square += double(v) * v;
  EXPECT_NEAR(square / double(g.size()), std::tgamma(1.5) / std::tgamma(0.5), 0.02);

  for (const auto& [n, m] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}, {4, 4}}) {
    const Array q = random::orthogonal(key, n, m, {2});
    ASSERT_EQ(q.shape(), (Shape{2, n, m}));
    const Array qt = jnp::transpose(q, {0, 2, 1});
    const Array gram = n >= m ? jnp::matmul(qt, q) : jnp::matmul(q, qt);
    const std::vector<float> v = values<float>(gram);
    const int64_t k = std::min(n, m);
    for (int64_t i = 0; i < 2 * k * k; ++i) {
      const bool diagonal = (i % (k * k)) % (k + 1) == 0;
      ASSERT_NEAR(v[size_t(i)], diagonal ? 1.0f : 0.0f, 1e-5f) << n << "x" << m << " at " << i;
    }
  }

  const Array mean = host({1, -2, 0.5f}, {3});
  const Array identity = host({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3});
  const Array drawn = random::multivariate_normal(key, mean, identity, {7});
  EXPECT_EQ(words(drawn), words(jnp::add(mean, random::normal(key, {7, 3}))));

  // An array of sigmas, all 0.3: the scalar sampler's values (both fold sqrt(2) sigma first, as
  // XLA does); in float16 too.
  const Array sigmas = host(std::vector<float>(3, 0.3f), {3});
  EXPECT_EQ(words(random::lognormal(key, sigmas, {700, 3})),
            words(random::lognormal(key, 0.3, {700, 3})));
  const Array halves =
      jnp::astype(random::lognormal(key, sigmas, {700, 3}, DType::kFloat16), DType::kFloat32);
  EXPECT_EQ(words(halves), words(jnp::astype(random::lognormal(key, 0.3, {700, 3}, DType::kFloat16),
                                             DType::kFloat32)));
}

TEST(Random, SamplersKeepToTheirRanges) {
  const Array key = random::PRNGKey(3);
  for (float v : values<float>(random::uniform(key, {4000}, DType::kFloat32, -2.0, 0.5))) {
    ASSERT_TRUE(v >= -2.0f && v < 0.5f) << v;
  }
  for (float v : values<float>(random::truncated_normal(key, -0.5, 0.25, {4000}))) {
    ASSERT_TRUE(v > -0.5f && v < 0.25f) << v;
  }
  std::vector<int> seen(13, 0);
  for (int32_t v : values<int32_t>(random::randint(key, {4000}, -4, 9))) {
    ASSERT_TRUE(v >= -4 && v < 9) << v;
    ++seen[static_cast<size_t>(v) + 4];
  }
  for (int n : seen) EXPECT_GT(n, 200);  // every value drawn, roughly evenly (expect ~308)
  // Sample moments of 2^16 normals: mean within 5 standard errors, variance within 3%.
  const std::vector<float> z = values<float>(random::normal(key, {1 << 16}));
  double sum = 0, squares = 0;
  for (float v : z) {
    sum += v;
    squares += double{v} * v;
  }
  const double mean = sum / static_cast<double>(z.size());
  EXPECT_NEAR(mean, 0.0, 5.0 / 256.0);
  EXPECT_NEAR(squares / static_cast<double>(z.size()) - mean * mean, 1.0, 0.03);
  // The functions of a uniform: exponential's draws positive with mean 1 (standard error
  // 1/256), laplace's symmetric about 0, logistic's finite, lognormal's positive.
  const std::vector<float> e = values<float>(random::exponential(key, {1 << 16}));
  ASSERT_TRUE(std::all_of(e.begin(), e.end(), [](float v) { return v >= 0.0f; }));
  EXPECT_NEAR(std::accumulate(e.begin(), e.end(), 0.0) / static_cast<double>(e.size()), 1.0,
              5.0 / 256.0);
  const std::vector<float> l = values<float>(random::laplace(key, {1 << 16}));
  EXPECT_NEAR(std::accumulate(l.begin(), l.end(), 0.0) / static_cast<double>(l.size()), 0.0,
              5.0 * std::sqrt(2.0) / 256.0);
  for (float v : values<float>(random::logistic(key, {4000}))) ASSERT_TRUE(std::isfinite(v)) << v;
  for (float v : values<float>(random::lognormal(key, 2.0, {4000}))) ASSERT_GT(v, 0.0f);
  const std::vector<bool> coin = values<bool>(random::bernoulli(key, 0.25, {4000}));
  EXPECT_NEAR(static_cast<double>(std::count(coin.begin(), coin.end(), true)) / 4000.0, 0.25, 0.03);
}

TEST(Random, PermutationsReorderEverySliceAlike) {
  const Array key = random::PRNGKey(11);
  std::vector<int32_t> p = values<int32_t>(random::permutation(key, 50));
  std::vector<int32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 50; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_NE(p, sorted);
  // Rows of a 50 x 3 matrix whose row r is (r, 100 + r, 200 + r) move together, in p's order.
  std::vector<int32_t> matrix;
  for (int32_t r = 0; r < 50; ++r) {
    for (int32_t c = 0; c < 3; ++c) matrix.push_back(100 * c + r);
  }
  const Array x = spmd::device_put(HostArray::from_vector(matrix, {50, 3}),
                                   spmd::SingleDeviceSharding(spmd::local_devices().front()));
  const std::vector<int32_t> rows = values<int32_t>(random::permutation(key, x, 0));
  for (size_t r = 0; r < 50; ++r) {
    EXPECT_EQ(rows[3 * r], p[r]);
    EXPECT_EQ(rows[3 * r + 2], 200 + p[r]);
  }
  const std::vector<int32_t> unique = values<int32_t>(random::choice(key, 10, {10}, false));
  EXPECT_EQ(std::set<int32_t>(unique.begin(), unique.end()).size(), 10u);
}

TEST(Random, SamplerArgumentsAreCheckedAsJaxChecksThem) {
  const Array key = random::PRNGKey(0);
  EXPECT_NE(message([&] { random::normal(key, {3}, DType::kInt32); }).find("dtype int32"),
            std::string::npos);
  EXPECT_NE(message([&] {
              random::randint(key, {3}, 0, 5, DType::kFloat32);
            }).find("must be an integer type"),
            std::string::npos);
  EXPECT_NE(message([&] {
              random::uniform(key, {2, -1});
            }).find("negative dimension"),
            std::string::npos);
  EXPECT_NE(message([&] { random::choice(key, 3, {4}, false); }).find("larger sample"),
            std::string::npos);
  EXPECT_NE(message([&] { random::normal(random::split(key, 2), {3}); }).find("uint32[2]"),
            std::string::npos);
  EXPECT_NE(message([&] {
              random::cauchy(key, {3}, DType::kFloat64);
            }).find("float32, float16 or bfloat16"),
            std::string::npos);
  EXPECT_NE(message([&] { random::laplace(key, {-2}); }).find("negative dimension"),
            std::string::npos);
}

// Typed keys wrap raw key data: the same values, with an element type of their own.
TEST(Random, TypedKeysAreTheirDataWrapped) {
  const random::Key key = random::key(42);
  EXPECT_EQ(key.shape(), Shape{});
  EXPECT_EQ(words(random::key_data(key)), words(random::PRNGKey(42)));
  EXPECT_EQ(random::key_impl(key), "threefry2x32");
  const random::Key keys = random::split(key, 3);
  EXPECT_EQ(keys.to_string(), "key<fry>[3]");
  const std::vector<uint32_t> raw = words(random::split(random::PRNGKey(42), 3));
  EXPECT_EQ(words(random::key_data(keys)), raw);
  EXPECT_EQ(words(random::key_data(keys[1])), (std::vector<uint32_t>{raw[2], raw[3]}));
  EXPECT_EQ(words(random::key_data(keys[-1])), (std::vector<uint32_t>{raw[4], raw[5]}));
  const Array row = random::key_data(keys[2]);
  EXPECT_EQ(words(random::normal(keys[2], {64})), words(random::normal(row, {64})));
  EXPECT_EQ(words(random::key_data(random::fold_in(key, 5))),
            words(random::fold_in(random::PRNGKey(42), 5)));
  EXPECT_EQ(words(random::key_data(random::wrap_key_data(random::key_data(keys)))), raw);
}

TEST(Random, TypedKeysUnderJitAreWrappedAndIndexedThere) {
  auto draw = spmd::jit(
      [](const Tensor& data) {
        const random::KeyTensor keys = random::split(random::wrap_key_data(data), 4);
        return random::uniform(keys[3], {16, 4});
      },
      {.out_shardings = {NamedSharding(random_mesh(), P("a", "b"))}});
  const Array data = spmd::device_put(random::PRNGKey(7), NamedSharding(random_mesh(), P()));
  const Array eager = random::uniform(random::split(random::key(7), 4)[3], {16, 4});
  const std::string text = draw.lower(data).as_text();
  for (const char* collective : {"psum", "all_gather", "all_to_all", "pmax"}) {
    EXPECT_EQ(text.find(collective), std::string::npos) << text;
  }
  EXPECT_EQ(words(draw(data)), words(eager));
}

TEST(Random, TypedKeyMisuseIsAClearError) {
  const random::Key keys = random::split(random::key(0), 2);
  EXPECT_NE(message([&] { random::normal(keys, {3}); }).find("accepts a single key"),
            std::string::npos);
  EXPECT_NE(message([&] { random::split(keys); }).find("shape (2,)"), std::string::npos);
  EXPECT_NE(message([&] { (void)keys[2]; }).find("out of range"), std::string::npos);
  EXPECT_NE(message([&] { (void)random::key(0)[0]; }).find("cannot be indexed"), std::string::npos);
  EXPECT_NE(message([&] {
              random::wrap_key_data(random::bits(random::PRNGKey(0), {3}));
            }).find("last dimension of 2"),
            std::string::npos);
  EXPECT_NE(message([&] {
              random::wrap_key_data(spmd::numpy::astype(random::PRNGKey(0), DType::kInt32));
            }).find("not int32[2]"),
            std::string::npos);
}

}  // namespace

namespace {

TEST(Random, WeightedChoiceUnderJitIsEachDevicesOwnSearch) {
  // With replacement, each draw searches the running sum of p at its own uniform: split over the
  // mesh it equals the eager draws with no collective (p, replicated, is searched whole).
  const Array host_key = random::PRNGKey(11);
  const Array key = spmd::device_put(host_key, NamedSharding(random_mesh(), P()));
  const Array host_p = random::uniform(random::PRNGKey(3), {20});
  const Array p = spmd::device_put(host_p, NamedSharding(random_mesh(), P()));
  const std::vector<int32_t> eager =
      values<int32_t>(random::choice(host_key, 20, {8, 6}, true, host_p));
  auto f = spmd::jit(
      [](const Tensor& k, const Tensor& w) {
        return random::choice(k, 20, {8, 6}, true, w);
      },
      {.out_shardings = {NamedSharding(random_mesh(), P("a", "b"))}});
  expect_no_collective(f.lower(key, p).as_text());
  EXPECT_EQ(values<int32_t>(f(key, p)), eager);
  // A zero weight is never drawn; every draw is a valid index.
  std::vector<float> w(20, 1.0f);
  w[4] = 0.0f;
  const Array weights = spmd::device_put(HostArray::from_vector(w, {20}), host_key.sharding());
  for (int32_t i : values<int32_t>(random::choice(host_key, 20, {1000}, true, weights))) {
    EXPECT_TRUE(i >= 0 && i < 20 && i != 4) << i;
  }
  const std::vector<int32_t> unique =
      values<int32_t>(random::choice(host_key, 20, {19}, false, weights));
  EXPECT_EQ(std::set<int32_t>(unique.begin(), unique.end()).size(), 19u);
  EXPECT_EQ(std::count(unique.begin(), unique.end(), 4), 0) << "the zero weight comes last";
  // Mapped over keys, each key draws its own (the search batches over its queries).
  const Array keys = random::split(host_key, 3);
  auto mapped = spmd::jit([](const Tensor& ks, const Tensor& wt) {
    return spmd::vmap([&](const Tensor& k) { return random::choice(k, 20, {5}, true, wt); })(ks);
  });
  // Without replacement (one top_k per key), and from an array's rows (a take per key).
  auto mapped_unique = spmd::jit([](const Tensor& ks, const Tensor& wt) {
    return spmd::vmap([&](const Tensor& k) { return random::choice(k, 20, {5}, false, wt); })(ks);
  });
  const Array rows = spmd::numpy::reshape(host_p, {5, 4});
  auto picked = spmd::jit([](const Tensor& ks, const Tensor& x) {
    return spmd::vmap([&](const Tensor& k) { return random::choice(k, x, {2}, true); })(ks);
  });
  const std::vector<int32_t> all = values<int32_t>(mapped(keys, host_p));
  const std::vector<int32_t> all_unique = values<int32_t>(mapped_unique(keys, host_p));
  const std::vector<float> all_rows = values<float>(picked(keys, rows));
  for (int i = 0; i < 3; ++i) {
    const Array k = spmd::numpy::reshape(spmd::numpy::slice(keys, {i, 0}, {i + 1, 2}), {2});
    const std::vector<int32_t> one = values<int32_t>(random::choice(k, 20, {5}, true, host_p));
    EXPECT_TRUE(std::equal(one.begin(), one.end(), all.begin() + int64_t{5} * i)) << i;
    const std::vector<int32_t> one_unique =
        values<int32_t>(random::choice(k, 20, {5}, false, host_p));
    EXPECT_TRUE(
        std::equal(one_unique.begin(), one_unique.end(), all_unique.begin() + int64_t{5} * i))
        << i;
    const std::vector<float> one_rows = values<float>(random::choice(k, rows, {2}, true));
    EXPECT_TRUE(std::equal(one_rows.begin(), one_rows.end(), all_rows.begin() + int64_t{8} * i))
        << i;
  }
}

TEST(Random, ChoiceFromAnArrayAndItsErrors) {
  const Array key = random::PRNGKey(5);
  const Array x = spmd::numpy::reshape(
      spmd::numpy::astype(random::randint(key, {12}, 0, 99), DType::kFloat32), {3, 4});
  // Columns drawn: each result column is one of x's columns.
  const Array cols = random::choice(key, x, {5}, true, std::nullopt, 1);
  ASSERT_EQ(cols.shape(), (Shape{3, 5}));
  const std::vector<float> xs = values<float>(x), cs = values<float>(cols);
  for (int j = 0; j < 5; ++j) {
    bool found = false;
    for (int c = 0; c < 4 && !found; ++c) {
      found = cs[j] == xs[c] && cs[5 + j] == xs[4 + c] && cs[10 + j] == xs[8 + c];
    }
    EXPECT_TRUE(found) << "column " << j;
  }
  const Array wrong_p = random::uniform(key, {5});
  EXPECT_NE(message([&] { random::choice(key, 4, {2}, true, wrong_p); }).find("p must be"),
            std::string::npos);
  EXPECT_NE(message([&] {
              random::choice(key, 4, {5}, false, random::uniform(key, {4}));
            }).find("larger sample"),
            std::string::npos);
  EXPECT_NE(message([&] {
              random::choice(key, 4, {2}, true,
                             spmd::numpy::astype(random::uniform(key, {4}), DType::kFloat16));
            }).find("float32 or float64"),
            std::string::npos);
  auto half_cumsum = spmd::jit([](const Tensor& t) {
    return spmd::numpy::cumsum(spmd::numpy::astype(t, DType::kBFloat16));
  });
  // A half-type cumsum scans in float32 and keeps its dtype, as jnp.cumsum (it was refused).
  const Array scanned = half_cumsum(x);
  EXPECT_EQ(scanned.dtype(), DType::kBFloat16);
  EXPECT_EQ(scanned.shape(), (Shape{x.size()}));
  EXPECT_EQ(random::choice(key, 4, {0}, true, random::uniform(key, {4})).shape(), (Shape{0}));
}

}  // namespace
