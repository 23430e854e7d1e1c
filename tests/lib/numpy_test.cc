// spmd::numpy and spmd::jit in one process on one device: each operation against a reference
// computed here element by element, JAX's dtype rules, trace-time errors, and the trace cache.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::Scalar;
using spmd::Shape;
using spmd::Tensor;

spmd::NamedSharding replicated() {
  static const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  return spmd::NamedSharding(mesh, spmd::P());
}

Array on_device(const HostArray& h) {
  return spmd::make_array_from_callback(h.shape(), replicated(),
                                        [&](const spmd::Index&) { return h; });
}

template <class T>
HostArray host(std::vector<T> values, Shape shape) {
  return HostArray::from_vector(values, std::move(shape));
}

// f over one input, run through jit, as a HostArray.
template <class F>
HostArray run(F f, const HostArray& x) {
  return spmd::jit([&](const Tensor& t) { return f(t); })(on_device(x)).to_host();
}

template <class F>
HostArray run2(F f, const HostArray& x, const HostArray& y) {
  return spmd::jit([&](const Tensor& a, const Tensor& b) { return f(a, b); })(on_device(x),
                                                                              on_device(y))
      .to_host();
}

const std::vector<float> kValues = {-2.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 3.0f, 7.5f};

TEST(Numpy, UnaryOperationsMatchTheStandardLibrary) {
  const HostArray x = host(kValues, {2, 4});
  const HostArray pos =
      host(std::vector<float>{0.25f, 0.5f, 1.0f, 2.0f, 3.0f, 4.0f, 9.0f, 16.0f}, {8});
  auto expect = [](const HostArray& got, const std::vector<float>& in, float (*ref)(float)) {
    ASSERT_EQ(got.dtype(), DType::kFloat32);
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_NEAR(got.data<float>()[i], ref(in[i]), 1e-6f * (1 + std::abs(ref(in[i]))));
  };
  expect(run([](const Tensor& t) { return jnp::exp(t); }, x), kValues,
         [](float v) { return std::exp(v); });
  expect(run([](const Tensor& t) { return jnp::tanh(t); }, x), kValues,
         [](float v) { return std::tanh(v); });
  expect(run([](const Tensor& t) { return jnp::abs(t); }, x), kValues,
         [](float v) { return std::abs(v); });
  expect(run([](const Tensor& t) { return -t; }, x), kValues, [](float v) { return -v; });
  expect(run([](const Tensor& t) { return jnp::relu(t); }, x), kValues,
         [](float v) { return v > 0 ? v : 0.0f; });
  expect(run([](const Tensor& t) { return jnp::sign(t); }, x), kValues, [](float v) {
    return v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f;
  });
  const std::vector<float> p(pos.data<float>().begin(), pos.data<float>().end());
  expect(run([](const Tensor& t) { return jnp::log(t); }, pos), p,
         [](float v) { return std::log(v); });
  expect(run([](const Tensor& t) { return jnp::sqrt(t); }, pos), p,
         [](float v) { return std::sqrt(v); });
  expect(run([](const Tensor& t) { return jnp::rsqrt(t); }, pos), p,
         [](float v) { return 1 / std::sqrt(v); });
}

TEST(Numpy, BinaryOperationsBroadcastAsNumPy) {
  const HostArray x = host(kValues, {2, 4});
  const HostArray row = host(std::vector<float>{1, 2, 3, 4}, {4});
  const HostArray col = host(std::vector<float>{10, 20}, {2, 1});
  const HostArray sum = run2([](const Tensor& a, const Tensor& b) { return a + b; }, x, row);
  const HostArray outer = run2([](const Tensor& a, const Tensor& b) { return a * b; }, row, col);
  ASSERT_EQ(sum.shape(), (Shape{2, 4}));
  ASSERT_EQ(outer.shape(), (Shape{2, 4}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(sum.data<float>()[i * 4 + j], kValues[i * 4 + j] + static_cast<float>(j + 1));
      EXPECT_EQ(outer.data<float>()[i * 4 + j], static_cast<float>((j + 1) * (i + 1) * 10));
    }
  }
  const HostArray pw = run([](const Tensor& t) { return jnp::power(t, 2); }, x);
  const HostArray dv = run([](const Tensor& t) { return 1.0f / (t + 10.0f); }, x);
  for (size_t i = 0; i < kValues.size(); ++i) {
    EXPECT_FLOAT_EQ(pw.data<float>()[i], kValues[i] * kValues[i]);
    EXPECT_FLOAT_EQ(dv.data<float>()[i], 1.0f / (kValues[i] + 10.0f));
  }
}

TEST(Numpy, MaximumAndMaxPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostArray x = host(std::vector<float>{1, nan, 3, 4}, {2, 2});
  const HostArray y = host(std::vector<float>{nan, 0, 5, 2}, {2, 2});
  const HostArray m =
      run2([](const Tensor& a, const Tensor& b) { return jnp::maximum(a, b); }, x, y);
  EXPECT_TRUE(std::isnan(m.data<float>()[0]));
  EXPECT_TRUE(std::isnan(m.data<float>()[1]));
  EXPECT_EQ(m.data<float>()[2], 5);
  EXPECT_EQ(m.data<float>()[3], 4);
  const HostArray r = run([](const Tensor& t) { return jnp::max(t, {1}); }, x);
  EXPECT_TRUE(std::isnan(r.data<float>()[0]));
  EXPECT_EQ(r.data<float>()[1], 4);
}

// A one-device jit runs on the calling thread: subnormals flush inside it (as XLA's), and the
// caller's own arithmetic keeps them after.
TEST(Numpy, SubnormalsFlushInsideAJitAndNotInTheCallersCode) {
  const float tiny = std::numeric_limits<float>::min();
  const HostArray x = host(std::vector<float>{tiny, -tiny, 1, 2}, {4});
  const HostArray half = run([](const Tensor& t) { return t * 0.5f; }, x);
  EXPECT_EQ(half.data<float>()[0], 0.0f);
  EXPECT_TRUE(std::signbit(half.data<float>()[1]) && half.data<float>()[1] == 0.0f);
  EXPECT_EQ(half.data<float>()[3], 1.0f);
  volatile float after = tiny;
  EXPECT_GT(after * 0.5f, 0.0f);
}

TEST(Numpy, ComparisonsWhereAndAstype) {
  const HostArray x = host(kValues, {8});
  const HostArray gt = run([](const Tensor& t) { return t > 0; }, x);
  const HostArray w = run([](const Tensor& t) { return jnp::where(t > 0, t, 0.0f); }, x);
  const HostArray i = run([](const Tensor& t) { return jnp::astype(t, DType::kInt32); }, x);
  ASSERT_EQ(gt.dtype(), DType::kBool);
  ASSERT_EQ(i.dtype(), DType::kInt32);
  for (size_t k = 0; k < kValues.size(); ++k) {
    EXPECT_EQ(gt.data<bool>()[k], kValues[k] > 0);
    EXPECT_EQ(w.data<float>()[k], kValues[k] > 0 ? kValues[k] : 0.0f);
    EXPECT_EQ(i.data<int32_t>()[k], static_cast<int32_t>(kValues[k]));  // toward zero
  }
}

// searchsorted's sides against counting: left counts the elements below each query, right
// those not above it (ties, -0 against 0, infinities, NaN last, integers at their maximum).
TEST(Numpy, SearchsortedCountsAsBothSidesSay) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> sorted = {-inf, -2.0f, -0.0f, 0.0f, 1.5f, 1.5f, 3.0f, inf, nan};
  const std::vector<float> queries = {-inf, -3.0f, 0.0f, -0.0f, 1.5f, 2.0f, inf, nan, 9.0f};
  const auto before = [](float e, float q) {  // e sorts before q in JAX's order
    if (std::isnan(q)) return !std::isnan(e);
    return !std::isnan(e) && e < q;
  };
  for (const char* side : {"left", "right"}) {
    SCOPED_TRACE(side);
    const HostArray got =
        run2([side](const Tensor& a, const Tensor& v) { return jnp::searchsorted(a, v, side); },
             host(sorted, {9}), host(queries, {9}));
    ASSERT_EQ(got.dtype(), DType::kInt32);
    for (size_t k = 0; k < queries.size(); ++k) {
      int32_t want = 0;
      for (const float e : sorted) {
        const bool equal = (std::isnan(e) && std::isnan(queries[k])) || e == queries[k];
        want += before(e, queries[k]) || (std::string(side) == "right" && equal);
      }
      EXPECT_EQ(got.data<int32_t>()[k], want) << "query " << queries[k];
    }
  }
  const int32_t top = std::numeric_limits<int32_t>::max();
  const HostArray ints =
      run2([](const Tensor& a, const Tensor& v) { return jnp::searchsorted(a, v, "right"); },
           host(std::vector<int32_t>{0, 3, 3, top}, {4}), host(std::vector<int32_t>{3, top}, {2}));
  EXPECT_EQ(ints.data<int32_t>()[0], 3);
  EXPECT_EQ(ints.data<int32_t>()[1], 4);
  EXPECT_THROW(
      run2([](const Tensor& a, const Tensor& v) { return jnp::searchsorted(a, v, "middle"); },
           host(sorted, {9}), host(queries, {9})),
      spmd::InvalidArgument);
}

// add_at (x.at[indices].add) against a loop: repeated indices add up, a negative one counts
// from the end, one out of range is dropped.
TEST(Numpy, AddAtScattersIntoTheLeadingAxis) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // 3 x 2
  const std::vector<int32_t> at = {0, 2, 0, -1, 7};
  const std::vector<float> v = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};  // 5 x 2
  std::vector<float> want = x;
  for (size_t k = 0; k < at.size(); ++k) {
    const int32_t i = at[k] < 0 ? at[k] + 3 : at[k];
    if (i < 0 || i >= 3) continue;
    for (int j = 0; j < 2; ++j) want[static_cast<size_t>(i * 2 + j)] += v[k * 2 + j];
  }
  const HostArray got =
      spmd::jit([](const Tensor& a, const Tensor& i, const Tensor& u) {
        return jnp::add_at(a, i, u);
      })(on_device(host(x, {3, 2})), on_device(host(at, {5})), on_device(host(v, {5, 2})))
          .to_host();
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got.data<float>()[k], want[k]) << k;
}

// update_at's five updates against a loop, in int32 (wrapping) and float32: updates apply in
// order (set's last stays), a negative index counts from the end, one out of range is dropped,
// or clamped with clip; values of another dtype promote and the result keeps a's.
TEST(Numpy, UpdateAtCombinesInOrderAsJaxScatters) {
  const std::vector<int32_t> x = {5, -2, 7, 0, 3, 9};  // 3 x 2
  const std::vector<int32_t> at = {0, 2, 0, -1, 7, -5};
  const std::vector<int32_t> v = {4, -8, 1, 6, 2147483647, 2, -3, 5, 11, 12, 13, 14};  // 6 x 2
  using Combine = std::function<int32_t(int32_t, int32_t)>;
  const std::vector<std::pair<jnp::IndexUpdate, Combine>> kinds = {
      {jnp::IndexUpdate::kSet, [](int32_t, int32_t b) { return b; }},
      {jnp::IndexUpdate::kAdd,
       [](int32_t a, int32_t b) {
         return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
       }},
      {jnp::IndexUpdate::kMultiply,
       [](int32_t a, int32_t b) {
         return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
       }},
      {jnp::IndexUpdate::kMin, [](int32_t a, int32_t b) { return std::min(a, b); }},
      {jnp::IndexUpdate::kMax, [](int32_t a, int32_t b) { return std::max(a, b); }}};
  for (const bool clip : {false, true}) {
    for (const auto& [how, combine] : kinds) {
      std::vector<int32_t> want = x;
      for (size_t k = 0; k < at.size(); ++k) {
        int32_t i = at[k] < 0 ? at[k] + 3 : at[k];
        if (clip) i = std::clamp(i, 0, 2);
        if (i < 0 || i >= 3) continue;
        for (size_t j = 0; j < 2; ++j) {
          int32_t& slot = want[static_cast<size_t>(i) * 2 + j];
          slot = combine(slot, v[k * 2 + j]);
        }
      }
      const HostArray got =
          spmd::jit([how = how, clip](const Tensor& a, const Tensor& i, const Tensor& u) {
            return jnp::update_at(a, i, u, how, clip);
          })(on_device(host(x, {3, 2})), on_device(host(at, {6})), on_device(host(v, {6, 2})))
              .to_host();
      ASSERT_EQ(got.dtype(), DType::kInt32);
      for (size_t k = 0; k < want.size(); ++k)
        EXPECT_EQ(got.data<int32_t>()[k], want[k]) << static_cast<int>(how) << " " << clip;
    }
  }
  // int32 x updated with float32 1.5: added in float32, then truncated back (as JAX's).
  const HostArray added =
      spmd::jit([](const Tensor& a, const Tensor& i, const Tensor& u) {
        return jnp::update_at(a, i, u, jnp::IndexUpdate::kAdd);
      })(on_device(host(x, {3, 2})), on_device(host(std::vector<int32_t>{1, 1}, {2})),
         on_device(host(std::vector<float>{1.5F}, {})))
          .to_host();
  EXPECT_EQ(added.dtype(), DType::kInt32);
  EXPECT_EQ(added.data<int32_t>()[2], 10);  // 7 + 1.5 + 1.5
  EXPECT_EQ(added.data<int32_t>()[3], 3);
  const auto bool_add = [](const Tensor& a, const Tensor& i) {
    const Tensor b = jnp::greater(a, Scalar(0));
    return jnp::update_at(b, i, b, jnp::IndexUpdate::kAdd);
  };
  EXPECT_THROW(spmd::jit(bool_add)(on_device(host(std::vector<int32_t>{1}, {1})),
                                   on_device(host(std::vector<int32_t>{0}, {1}))),
               spmd::DTypeError);
}

// take_clipped (jnp.take's clip mode): a negative index from the end once, then clamped into
// the axis; no indices into an empty axis give an empty result, some are refused.
TEST(Numpy, TakeClippedWrapsOnceThenClamps) {
  const std::vector<float> x = {10, 11, 12, 13, 14, 15};  // 3 x 2
  const std::vector<int32_t> at = {2, -1, -3, -7, 9, 0};
  const HostArray got = spmd::jit([](const Tensor& a, const Tensor& i) {
                          return jnp::take_clipped(a, i, 0);
                        })(on_device(host(x, {3, 2})), on_device(host(at, {6})))
                            .to_host();
  ASSERT_EQ(got.shape(), (Shape{6, 2}));
  const std::vector<int> rows = {2, 2, 0, 0, 2, 0};
  for (size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(got.data<float>()[k * 2], x[static_cast<size_t>(rows[k]) * 2]) << k;
  }
  const HostArray none = spmd::jit([](const Tensor& a, const Tensor& i) {
                           return jnp::take_clipped(a, i, 0);
                         })(on_device(host(std::vector<float>{}, {0, 3})),
                            on_device(host(std::vector<int32_t>{}, {0})))
                             .to_host();
  EXPECT_EQ(none.shape(), (Shape{0, 3}));
  EXPECT_THROW(spmd::jit([](const Tensor& a, const Tensor& i) {
                 return jnp::take_clipped(a, i, 0);
               })(on_device(host(std::vector<float>{}, {0, 3})),
                  on_device(host(std::vector<int32_t>{1}, {1}))),
               spmd::InvalidArgument);
}

// strided_slice and strided (x[::-2, 1::3], jnp.flip) under jit: each element read where its
// steps say, the gradient each cotangent put back where its element was read (zeros elsewhere),
// vmap's slices each stepped alike, and steps of 0 or boxes outside the array refused.
TEST(Numpy, StridedSlicesReadWhereTheirStepsSayAndPutGradientsBack) {
  std::vector<float> v(35);
  std::iota(v.begin(), v.end(), 0.0f);
  const HostArray x = host(v, {5, 7});
  const auto box = [](const Tensor& a) { return jnp::strided_slice(a, {4, 1}, {-2, 3}, {3, 2}); };
  const HostArray got = run(box, x);
  ASSERT_EQ(got.shape(), (Shape{3, 2}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(got.data<float>()[i * 2 + j], v[static_cast<size_t>((4 - 2 * i) * 7 + 1 + 3 * j)]);
  const HostArray flipped = run([](const Tensor& a) { return jnp::strided(a, -1, -1); }, x);
  const HostArray halves = run([](const Tensor& a) { return jnp::strided(a, 1, 2); }, x);
  ASSERT_EQ(halves.shape(), (Shape{5, 4}));
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 7; ++j)
      EXPECT_EQ(flipped.data<float>()[i * 7 + j], v[static_cast<size_t>(i * 7 + 6 - j)]);
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(halves.data<float>()[i * 4 + j], v[static_cast<size_t>(i * 7 + 2 * j)]);
  }
  // d/dx sum(box(x) * w): w's element (i, j) at x's (4 - 2i, 1 + 3j), 0 elsewhere.
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const HostArray grad = spmd::jit([&](const Tensor& a, const Tensor& weights) {
                           return spmd::grad([&](const Tensor& t) {
                             return jnp::sum(jnp::multiply(box(t), weights));
                           })(a);
                         })(on_device(x), on_device(host(w, {3, 2})))
                             .to_host();
  std::vector<float> want(35, 0.0f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      want[static_cast<size_t>((4 - 2 * i) * 7 + 1 + 3 * j)] = w[i * 2 + j];
  const auto g = grad.data<float>();
  EXPECT_EQ(std::vector<float>(g.begin(), g.end()), want);
  const HostArray mapped =
      spmd::jit([](const Tensor& a) {
        return spmd::vmap([](const Tensor& t) { return jnp::strided(t, 0, -2); })(a);
      })(on_device(x))
          .to_host();
  ASSERT_EQ(mapped.shape(), (Shape{5, 4}));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(mapped.data<float>()[i * 4 + j], v[static_cast<size_t>(i * 7 + 6 - 2 * j)]);
  EXPECT_THROW(run([](const Tensor& a) { return jnp::strided(a, 0, 0); }, x),
               spmd::InvalidArgument);
  EXPECT_THROW(run(
                   [](const Tensor& a) {
                     return jnp::strided_slice(a, {4, 0}, {2, 1}, {2, 7});
                   },
                   x),
               spmd::InvalidArgument);
}

TEST(Numpy, ReductionsOverAxesWithAndWithoutKeepdims) {
  std::vector<float> v(24);
  for (int k = 0; k < 24; ++k) v[k] = static_cast<float>((k * 5) % 7);
  const HostArray x = host(v, {2, 3, 4});
  const HostArray s = run([](const Tensor& t) { return jnp::sum(t, {0, 2}); }, x);
  const HostArray k = run([](const Tensor& t) { return jnp::sum(t, {1}, true); }, x);
  const HostArray m = run([](const Tensor& t) { return jnp::mean(t); }, x);
  const HostArray mn = run([](const Tensor& t) { return jnp::min(t, {-1}); }, x);
  const HostArray am = run([](const Tensor& t) { return jnp::argmax(t, 1); }, x);
  ASSERT_EQ(s.shape(), (Shape{3}));
  ASSERT_EQ(k.shape(), (Shape{2, 1, 4}));
  ASSERT_EQ(m.shape(), (Shape{}));
  ASSERT_EQ(am.dtype(), DType::kInt32);
  float total = 0;
  for (int b = 0; b < 3; ++b) {
    float want = 0;
    for (int a = 0; a < 2; ++a) {
      for (int c = 0; c < 4; ++c) want += v[a * 12 + b * 4 + c];
    }
    EXPECT_EQ(s.data<float>()[b], want);
    total += want;
  }
  EXPECT_FLOAT_EQ(m.data<float>()[0], total / 24);
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 4; ++c) {
      float sum = 0, best = -1;
      int arg = 0;
      for (int b = 0; b < 3; ++b) {
        const float e = v[a * 12 + b * 4 + c];
        sum += e;
        if (e > best) best = e, arg = b;
      }
      EXPECT_EQ(k.data<float>()[a * 4 + c], sum);
      EXPECT_EQ(am.data<int32_t>()[a * 4 + c], arg);
    }
    for (int b = 0; b < 3; ++b) {
      float least = 1e9f;
      for (int c = 0; c < 4; ++c) least = std::min(least, v[a * 12 + b * 4 + c]);
      EXPECT_EQ(mn.data<float>()[a * 3 + b], least);
    }
  }
}

TEST(Numpy, MatmulOfVectorsMatricesAndBatches) {
  std::vector<double> a(size_t{24}), b(size_t{20});
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<double>(k % 5) - 2;
  for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<double>(k % 3) + 0.5;
  const HostArray x = host(a, {2, 3, 4});
  const HostArray y = host(b, {4, 5});
  const HostArray z =
      run2([](const Tensor& p, const Tensor& q) { return jnp::matmul(p, q); }, x, y);
  ASSERT_EQ(z.shape(), (Shape{2, 3, 5}));
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        double want = 0;
        for (int k = 0; k < 4; ++k) want += a[n * 12 + i * 4 + k] * b[k * 5 + j];
        EXPECT_DOUBLE_EQ(z.data<double>()[n * 15 + i * 5 + j], want);
      }
    }
  }
  const HostArray v = host(std::vector<double>{1, 2, 3, 4}, {4});
  const HostArray mv = run2([](const Tensor& p, const Tensor& q) { return jnp::dot(q, p); }, y, v);
  ASSERT_EQ(mv.shape(), (Shape{5}));
  for (int j = 0; j < 5; ++j) {
    double want = 0;
    for (int k = 0; k < 4; ++k) want += (k + 1) * b[k * 5 + j];
    EXPECT_DOUBLE_EQ(mv.data<double>()[j], want);
  }
}

template <class F>
std::string trace_error(F f, const HostArray& x) {
  try {
    run(f, x);
  } catch (const spmd::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Numpy, EinsumContractsBatchesTransposesAndSums) {
  std::vector<double> a(size_t{24}), b(size_t{40});
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<double>(k % 7) - 3;
  for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<double>(k % 5) - 1;
  const HostArray x = host(a, {2, 3, 4}), y = host(b, {2, 4, 5});
  const HostArray bmm = run2(
      [](const Tensor& p, const Tensor& q) { return jnp::einsum("bij,bjk->bik", p, q); }, x, y);
  const HostArray mm =
      run2([](const Tensor& p, const Tensor& q) { return jnp::matmul(p, q); }, x, y);
  EXPECT_TRUE(bmm == mm);
  // "bij,bjk->kib": the same product, its axes reordered; "bij,bjk": implicit output "ik" (b
  // summed).
  const HostArray perm = run2(
      [](const Tensor& p, const Tensor& q) { return jnp::einsum("bij,bjk->kib", p, q); }, x, y);
  const HostArray implicit =
      run2([](const Tensor& p, const Tensor& q) { return jnp::einsum("bij,bjk", p, q); }, x, y);
  ASSERT_EQ(perm.shape(), (Shape{5, 3, 2}));
  ASSERT_EQ(implicit.shape(), (Shape{3, 5}));
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(perm.data<double>()[k * 6 + i * 2 + n], mm.data<double>()[n * 15 + i * 5 + k]);
      }
    }
  }
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 5; ++k) {
      EXPECT_EQ(implicit.data<double>()[i * 5 + k],
                mm.data<double>()[i * 5 + k] + mm.data<double>()[15 + i * 5 + k]);
    }
  }
  const HostArray t = run([](const Tensor& p) { return jnp::einsum("bij->jb", p); }, x);
  ASSERT_EQ(t.shape(), (Shape{4, 2}));
  for (int j = 0; j < 4; ++j) {
    for (int n = 0; n < 2; ++n) {
      double want = 0;
      for (int i = 0; i < 3; ++i) want += a[n * 12 + i * 4 + j];
      EXPECT_EQ(t.data<double>()[j * 2 + n], want);
    }
  }
  EXPECT_NE(trace_error([](const Tensor& p) { return jnp::einsum("ii->i", p); },
                        host(std::vector<float>(4), {2, 2}))
                .find("einsum(\"ii->i\"): 'i' repeats within an operand"),
            std::string::npos);
}

TEST(Numpy, ShapesMoveElementsAsNumPy) {
  std::vector<int32_t> v(24);
  for (int k = 0; k < 24; ++k) v[k] = k;
  const HostArray x = host(v, {2, 3, 4});
  const HostArray t = run([](const Tensor& a) { return jnp::transpose(a, {2, 0, 1}); }, x);
  const HostArray r = run([](const Tensor& a) { return jnp::reshape(a, {4, -1}); }, x);
  const HostArray s = run([](const Tensor& a) { return jnp::slice(a, {1, -2}, {2, 100}); }, x);
  const HostArray c = run([](const Tensor& a) { return jnp::concatenate({a, a * 2}, 2); }, x);
  const HostArray b = run(
      [](const Tensor& a) {
        return jnp::broadcast_to(jnp::expand_dims(a, 0), {3, 2, 3, 4});
      },
      x);
  const HostArray q = run(
      [](const Tensor& a) {
        return jnp::squeeze(jnp::reshape(a, {1, 24, 1}));
      },
      x);
  ASSERT_EQ(t.shape(), (Shape{4, 2, 3}));
  ASSERT_EQ(r.shape(), (Shape{4, 6}));
  ASSERT_EQ(s.shape(), (Shape{1, 2, 4}));
  ASSERT_EQ(c.shape(), (Shape{2, 3, 8}));
  ASSERT_EQ(b.shape(), (Shape{3, 2, 3, 4}));
  ASSERT_EQ(q.shape(), (Shape{24}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        const int32_t e = v[i * 12 + j * 4 + k];
        EXPECT_EQ(t.data<int32_t>()[k * 6 + i * 3 + j], e);
        EXPECT_EQ(c.data<int32_t>()[i * 24 + j * 8 + k], e);
        EXPECT_EQ(c.data<int32_t>()[i * 24 + j * 8 + 4 + k], 2 * e);
        EXPECT_EQ(b.data<int32_t>()[2 * 24 + i * 12 + j * 4 + k], e);
      }
    }
  }
  EXPECT_EQ(r.data<int32_t>()[7], 7);
  for (int j = 0; j < 2; ++j) {
    for (int k = 0; k < 4; ++k) EXPECT_EQ(s.data<int32_t>()[j * 4 + k], v[12 + (j + 1) * 4 + k]);
  }
}

TEST(Numpy, DotBeyondRankTwoAndWithAScalarIsJnpDot) {
  // a (2, 3, 4) . b (5, 4, 2): the sum over a's last axis and b's second-to-last, (2, 3, 5, 2).
  std::vector<float> av(24), bv(40);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 5) - 2;
  const HostArray a = host(av, {2, 3, 4}), b = host(bv, {5, 4, 2});
  const HostArray z = run2([](const Tensor& p, const Tensor& q) { return jnp::dot(p, q); }, a, b);
  ASSERT_EQ(z.shape(), (Shape{2, 3, 5, 2}));
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int m = 0; m < 2; ++m) {
        float want = 0;
        for (int k = 0; k < 4; ++k) want += av[i * 4 + k] * bv[j * 8 + k * 2 + m];
        EXPECT_EQ(z.data<float>()[(i * 5 + j) * 2 + m], want);
      }
    }
  }
  const HostArray v = host(std::vector<float>{1, 0, -1, 2}, {4});
  const HostArray av4 = run2([](const Tensor& p, const Tensor& q) { return jnp::dot(p, q); }, a, v);
  ASSERT_EQ(av4.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(av4.data<float>()[i], av[i * 4] - av[i * 4 + 2] + 2 * av[i * 4 + 3]);
  }
  const HostArray s = host(std::vector<float>{2.5f}, {});
  const HostArray scaled =
      run2([](const Tensor& p, const Tensor& q) { return jnp::dot(q, p); }, a, s);
  ASSERT_EQ(scaled.shape(), a.shape());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(scaled.data<float>()[i], 2.5f * av[i]);
}

TEST(Numpy, SoftmaxOverSeveralAxesAndOfNothing) {
  const HostArray x = host(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  const HostArray all = run([](const Tensor& t) { return jnp::softmax(t, jnp::AxisList{}); }, x);
  double z = 0;
  for (int i = 0; i < 6; ++i) z += std::exp(static_cast<double>(i));
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(all.data<float>()[i], std::exp(i) / z, 1e-6);
  const HostArray empty = host(std::vector<int32_t>{}, {0, 3});
  const HostArray sm = run([](const Tensor& t) { return jnp::softmax(t, 1); }, empty);
  EXPECT_EQ(sm.dtype(), DType::kFloat32);
  EXPECT_EQ(sm.shape(), (Shape{0, 3}));
  const HostArray rows = host(std::vector<float>{}, {2, 0});
  const HostArray ls = run([](const Tensor& t) { return jnp::logsumexp(t, {1}, true); }, rows);
  ASSERT_EQ(ls.shape(), (Shape{2, 1}));
  for (int r = 0; r < 2; ++r) EXPECT_EQ(ls.data<float>()[r], -INFINITY);
}

TEST(Numpy, WhereTakesAWeakScalarOnEitherSide) {
  const HostArray x = host(std::vector<float>{1, 2, 3}, {3});
  auto left = [](const Tensor& t) {
    return jnp::where(t > Scalar(1.5), Scalar(0.5), jnp::astype(t, DType::kFloat16));
  };
  EXPECT_EQ(run(left, x).dtype(), DType::kFloat16);  // the scalar takes the other branch's dtype
  const HostArray l =
      run([&](const Tensor& t) { return jnp::astype(left(t), DType::kFloat32); }, x);
  const HostArray r =
      run([](const Tensor& t) { return jnp::where(t > Scalar(1.5), t, Scalar(-1)); }, x);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(l.data<float>()[i], i == 0 ? 1.0f : 0.5f);
    EXPECT_EQ(r.data<float>()[i], i == 0 ? -1.0f : static_cast<float>(i + 1));
  }
}

TEST(Numpy, SoftmaxAndLogsumexpSubtractTheMaximum) {
  const HostArray x = host(std::vector<float>{1000, 1001, 1002, -5, 0, 5}, {2, 3});
  const HostArray sm = run([](const Tensor& t) { return jnp::softmax(t); }, x);
  const HostArray ls = run([](const Tensor& t) { return jnp::logsumexp(t, {1}); }, x);
  for (int r = 0; r < 2; ++r) {
    double m = -1e300, z = 0;
    for (int c = 0; c < 3; ++c) m = std::max(m, static_cast<double>(x.data<float>()[r * 3 + c]));
    for (int c = 0; c < 3; ++c) z += std::exp(x.data<float>()[r * 3 + c] - m);
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(sm.data<float>()[r * 3 + c], std::exp(x.data<float>()[r * 3 + c] - m) / z, 1e-6);
    }
    EXPECT_NEAR(ls.data<float>()[r], m + std::log(z), 1e-3);
  }
}

TEST(Numpy, CreationInsideATrace) {
  const HostArray x = host(std::vector<float>{1, 2, 3}, {3});
  const HostArray out = run(
      [](const Tensor& t) {
        return t + jnp::ones({3}) + jnp::astype(jnp::arange(3), DType::kFloat32) +
               jnp::full({}, 0.5f);
      },
      x);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(out.data<float>()[k], (k + 1) + 1 + k + 0.5f);
  const HostArray c = host(std::vector<float>{10, 20, 30}, {3});
  const HostArray captured = run([&](const Tensor& t) { return t * jnp::asarray(c); }, x);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(captured.data<float>()[k], (k + 1) * 10.0f * (k + 1));
}

TEST(Numpy, HalfPrecisionComputesInFloat32AndRoundsOnce) {
  std::vector<spmd::float16> h;
  for (float v : {1.0f, 2.5f, 1000.0f, 0.1f}) h.push_back(spmd::to_float16(v));
  const HostArray x = host(h, {4});
  const HostArray out = run([](const Tensor& t) { return jnp::exp(t * 0.001f); }, x);
  ASSERT_EQ(out.dtype(), DType::kFloat16);
  for (int k = 0; k < 4; ++k) {
    const float in = spmd::to_float(h[k]);
    const float product =
        spmd::to_float(spmd::to_float16(in * spmd::to_float(spmd::to_float16(0.001f))));
    EXPECT_EQ(out.data<spmd::float16>()[k], spmd::to_float16(std::exp(product)));
  }
}

// Values 0…5 as `dtype` (bool: v % 2), from float64.
HostArray small_values(DType dtype, int n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) v[k] = dtype == DType::kBool ? (k + seed) % 2 : (k * 3 + seed) % 6;
  return spmd::jit([dtype](const Tensor& t) { return jnp::astype(t, dtype); })(
             on_device(host(v, {n})))
      .to_host();
}

std::vector<double> as_doubles(const HostArray& h) {
  const HostArray wide =
      spmd::jit([](const Tensor& t) { return jnp::astype(t, DType::kFloat64); })(on_device(h))
          .to_host();
  return {wide.data<double>().begin(), wide.data<double>().end()};
}

TEST(Numpy, EveryDtypeAddsMultipliesComparesSumsAndContracts) {
  for (int t = 0; t <= static_cast<int>(DType::kFloat64); ++t) {
    const auto dtype = static_cast<DType>(t);
    SCOPED_TRACE(std::string(spmd::dtype_name(dtype)));
    const HostArray x = small_values(dtype, 6, 0), y = small_values(dtype, 6, 1);
    const std::vector<double> a = as_doubles(x), b = as_doubles(y);
    const bool boolean = dtype == DType::kBool;
    const std::vector<double> add =
        as_doubles(run2([](const Tensor& p, const Tensor& q) { return p + q; }, x, y));
    const std::vector<double> mul =
        as_doubles(run2([](const Tensor& p, const Tensor& q) { return p * q; }, x, y));
    const std::vector<double> mx =
        as_doubles(run2([](const Tensor& p, const Tensor& q) { return jnp::maximum(p, q); }, x, y));
    const HostArray lt = run2([](const Tensor& p, const Tensor& q) { return p < q; }, x, y);
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(add[k], boolean ? double(a[k] || b[k]) : a[k] + b[k]);
      EXPECT_EQ(mul[k], boolean ? double(a[k] && b[k]) : a[k] * b[k]);
      EXPECT_EQ(mx[k], std::max(a[k], b[k]));
      EXPECT_EQ(lt.data<bool>()[k], a[k] < b[k]);
    }
    const HostArray s = run([](const Tensor& p) { return jnp::sum(p); }, x);
    EXPECT_EQ(as_doubles(s)[0], std::accumulate(a.begin(), a.end(), 0.0));
    const HostArray m = run2(
        [](const Tensor& p, const Tensor& q) {
          return jnp::matmul(jnp::reshape(p, {2, 3}), jnp::reshape(q, {3, 2}));
        },
        x, y);
    const std::vector<double> mm = as_doubles(m);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        double want = 0;
        for (int k = 0; k < 3; ++k) want += a[i * 3 + k] * b[k * 2 + j];
        EXPECT_EQ(mm[i * 2 + j], boolean ? double(want != 0) : want);
      }
    }
  }
}

// Sets the x64 switch for a scope and restores it after.
class X64Scope {
 public:
  explicit X64Scope(bool on) : before_(spmd::config::x64_enabled()) {
    spmd::config::set_x64_enabled(on);
  }
  ~X64Scope() { spmd::config::set_x64_enabled(before_); }
  X64Scope(const X64Scope&) = delete;
  X64Scope& operator=(const X64Scope&) = delete;

 private:
  bool before_;
};

TEST(Numpy, PromotionFollowsJaxLattice) {
  using spmd::numpy::promote_types;
  const X64Scope off(false);
  EXPECT_EQ(promote_types(DType::kInt32, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kUInt32, DType::kInt32), DType::kInt32);  // int64, canonical
  EXPECT_EQ(promote_types(DType::kUInt64, DType::kInt64), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kInt64, DType::kInt32), DType::kInt64);  // an operand's own
  EXPECT_EQ(promote_types(DType::kBFloat16, DType::kFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kBool, DType::kInt8), DType::kInt8);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt32), DType::kInt32);
  const HostArray i = host(std::vector<int32_t>{1, 2}, {2});
  EXPECT_EQ(run([](const Tensor& t) { return t * 2.0f; }, i).dtype(), DType::kFloat32);
  EXPECT_EQ(run([](const Tensor& t) { return t + 1; }, i).dtype(), DType::kInt32);
  EXPECT_EQ(run([](const Tensor& t) { return t / 2; }, i).dtype(), DType::kFloat32);
  EXPECT_EQ(run([](const Tensor& t) { return jnp::sum(jnp::astype(t, DType::kInt8)); }, i).dtype(),
            DType::kInt32);
  const HostArray d = host(std::vector<double>{1, 2}, {2});
  EXPECT_EQ(run([](const Tensor& t) { return t * 2.0f; }, d).dtype(), DType::kFloat64);
  const HostArray l = host(std::vector<int64_t>{1, 2}, {2});
  EXPECT_EQ(run([](const Tensor& t) { return t * 2.0; }, l).dtype(), DType::kFloat32);
  EXPECT_EQ(run([](const Tensor& t) { return jnp::sqrt(t); }, l).dtype(), DType::kFloat32);
}

TEST(Numpy, PromotionUnderX64KeepsTheLatticesWideTypes) {
  using spmd::numpy::promote_types;
  const X64Scope on(true);
  EXPECT_EQ(promote_types(DType::kUInt32, DType::kInt32), DType::kInt64);
  EXPECT_EQ(promote_types(DType::kUInt64, DType::kInt64), DType::kFloat64);
  const HostArray i = host(std::vector<int32_t>{1, 2}, {2});
  EXPECT_EQ(run([](const Tensor& t) { return t * 2.0f; }, i).dtype(), DType::kFloat64);
  EXPECT_EQ(run([](const Tensor& t) { return jnp::sqrt(t); }, i).dtype(), DType::kFloat32);
  const HostArray l = host(std::vector<int64_t>{1, 2}, {2});
  EXPECT_EQ(run([](const Tensor& t) { return jnp::sqrt(t); }, l).dtype(), DType::kFloat64);
  // 2^53 + 1 has no double: the constant keeps every bit, in arithmetic and in full.
  constexpr int64_t kOdd = (int64_t{1} << 53) + 1;
  const HostArray sum = run([](const Tensor& t) { return t + Scalar(kOdd); }, l);
  EXPECT_EQ(sum, host(std::vector<int64_t>{kOdd + 1, kOdd + 2}, {2}));
  const HostArray filled =
      run([](const Tensor& t) { return t * 0 + jnp::full({2}, Scalar(kOdd), DType::kInt64); }, l);
  EXPECT_EQ(filled, host(std::vector<int64_t>{kOdd, kOdd}, {2}));
}

TEST(Numpy, AJitCallTracesAgainWhenTheX64SwitchChanges) {
  const X64Scope off(false);
  const Array i = on_device(host(std::vector<int32_t>{1, 2}, {2}));
  auto half = spmd::jit([](const Tensor& t) { return t * 0.5; });
  EXPECT_EQ(half(i).dtype(), DType::kFloat32);
  spmd::config::set_x64_enabled(true);
  EXPECT_EQ(half(i).dtype(), DType::kFloat64);
  spmd::config::set_x64_enabled(false);
  EXPECT_EQ(half(i).dtype(), DType::kFloat32);
}

TEST(Numpy, TraceErrorsNameTheOperationAndShapes) {
  const HostArray x = host(std::vector<float>(6, 1.0f), {2, 3});
  EXPECT_NE(trace_error([](const Tensor& t) { return t + jnp::ones({4}); }, x)
                .find("add: shapes (2, 3) and (4) do not broadcast"),
            std::string::npos);
  EXPECT_NE(trace_error([](const Tensor& t) { return jnp::matmul(t, t); }, x)
                .find("matmul: contracting dimensions differ"),
            std::string::npos);
  EXPECT_NE(trace_error([](const Tensor& t) { return jnp::sum(t, {2}); }, x)
                .find("sum: axis 2 is out of range for shape (2, 3)"),
            std::string::npos);
  EXPECT_NE(trace_error(
                [](const Tensor& t) {
                  return jnp::reshape(t, {4, 2});
                },
                x)
                .find("reshape: cannot reshape f32[2,3] into shape (4, 2)"),
            std::string::npos);
  EXPECT_NE(trace_error([](const Tensor& t) { return -jnp::astype(t, DType::kBool); }, x)
                .find("negative: not defined on bool"),
            std::string::npos);
  Tensor kept;
  run([&](const Tensor& t) { return kept = t * 2.0f; }, x);
  EXPECT_THROW(jnp::exp(kept), spmd::InvalidArgument);
  try {
    jnp::exp(kept);
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("outside the spmd::jit call that traced it"),
              std::string::npos);
  }
  EXPECT_THROW(jnp::zeros({2}), spmd::InvalidArgument);
}

TEST(Jit, ElementwiseChainsRunFusedOverManyTiles) {
  const int n = 10007;  // several tiles and a partial one
  std::vector<float> a(n), b(n);
  for (int k = 0; k < n; ++k) {
    a[k] = static_cast<float>(k % 17) - 8;
    b[k] = static_cast<float>(k % 5);
  }
  const Array x = on_device(host(a, {n})), y = on_device(host(b, {n}));
  auto fn =
      spmd::jit([](const Tensor& p, const Tensor& q) { return jnp::tanh(p * 0.25f + q) * q - p; });
  const std::string text = fn.lower(x, y).as_text();
  EXPECT_NE(text.find("= fused f32[10007]"), std::string::npos) << text;
  EXPECT_EQ(text.find("= mul f32"), std::string::npos) << "no step of the chain runs alone:\n"
                                                       << text;
  const HostArray out = fn(x, y).to_host();
  for (int k = 0; k < n; ++k) {
    EXPECT_NEAR(out.data<float>()[k], std::tanh(a[k] * 0.25f + b[k]) * b[k] - a[k], 1e-5f) << k;
  }
}

TEST(Eager, NumpyOnArraysRunsAtOnceAndKeepsTheSharding) {
  const HostArray x = host(std::vector<float>{1, -2, 3, -4}, {2, 2});
  const HostArray y = host(std::vector<float>{10, 20, 30, 40}, {2, 2});
  const Array a = on_device(x), b = on_device(y);
  const HostArray s = (a + b * a).to_host();
  const HostArray r = jnp::sum(jnp::relu(a), {1}).to_host();
  const HostArray m = jnp::matmul(a, b).to_host();
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(s.data<float>()[k], x.data<float>()[k] + y.data<float>()[k] * x.data<float>()[k]);
  }
  EXPECT_EQ(r.data<float>()[0], 1);
  EXPECT_EQ(r.data<float>()[1], 3);
  EXPECT_EQ(m.data<float>()[0], 1 * 10 + -2 * 30);
  EXPECT_EQ((a + b).sharding().to_string(), a.sharding().to_string());
  const HostArray e = jnp::einsum("ij,jk->ik", a, b).to_host();
  EXPECT_TRUE(e == m);
  const HostArray c = jnp::concatenate({a, b}, 1).to_host();
  ASSERT_EQ(c.shape(), (Shape{2, 4}));
  EXPECT_EQ(c.data<float>()[2], 10);
  const HostArray sl = jnp::slice(jnp::squeeze(jnp::expand_dims(a, 0)), {1}, {2}).to_host();
  ASSERT_EQ(sl.shape(), (Shape{1, 2}));
  EXPECT_EQ(sl.data<float>()[1], -4);
  const Array single = spmd::device_put(a, spmd::SingleDeviceSharding(spmd::local_devices()[0]));
  EXPECT_EQ(jnp::exp(single).to_host().shape(), (Shape{2, 2}));
}

// The eager functions' compiled programs are the runtime session's: a new session traces anew.
TEST(Eager, ItsCompiledProgramsEndWithTheSession) {
  int traces = 0;
  const std::function<Tensor(const std::vector<Tensor>&)> twice =
      [&traces](const std::vector<Tensor>& t) {
        ++traces;
        return t[0] * 2.0f;
      };
  auto run_in_session = [&] {
    try {
      spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = 2});
    } catch (const spmd::FailedPrecondition& e) {
      GTEST_SKIP() << "needs a process of its own, as CTest runs each case: " << e.what();
    }
    const spmd::Mesh mesh(spmd::devices(), {"x"});
    const Array a = spmd::device_put(host(std::vector<float>{1, 2, 3, 4}, {4}),
                                     spmd::NamedSharding(mesh, spmd::P("x")));
    const Array twice_a = jnp::detail::eager("test_twice", {&a}, twice);
    EXPECT_EQ(twice_a.to_host().data<float>()[3], 8);
    jnp::detail::eager("test_twice", {&a}, twice);
    spmd::distributed::shutdown();
  };
  run_in_session();
  if (IsSkipped()) return;
  EXPECT_EQ(traces, 1);  // cached within the session
  run_in_session();
  EXPECT_EQ(traces, 2);  // the same mesh again, but a new session: traced again
}

TEST(Jit, TracesOncePerSignatureAndPassesDictionaries) {
  int traces = 0;
  auto fn = spmd::jit([&](const std::map<std::string, Tensor>& p, const Tensor& x) {
    ++traces;
    return std::vector<Tensor>{jnp::matmul(x, p.at("w")) + p.at("b"), jnp::sum(x)};
  });
  const std::map<std::string, Array> params{
      {"w", on_device(host(std::vector<float>{1, 0, 0, 1}, {2, 2}))},
      {"b", on_device(host(std::vector<float>{10, 20}, {2}))}};
  const Array x = on_device(host(std::vector<float>{1, 2, 3, 4}, {2, 2}));
  const std::vector<Array> out = fn(params, x);
  fn(params, x);
  EXPECT_EQ(traces, 1);
  ASSERT_EQ(out.size(), 2u);
  const HostArray y = out[0].to_host();
  EXPECT_EQ(y.data<float>()[0], 11);
  EXPECT_EQ(y.data<float>()[3], 24);
  EXPECT_EQ(out[1].to_host().data<float>()[0], 10);
  fn(params, on_device(host(std::vector<float>{1, 2}, {1, 2})));
  EXPECT_EQ(traces, 2);
}

}  // namespace
