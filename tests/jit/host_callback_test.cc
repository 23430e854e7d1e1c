// Host callbacks (spmd/host_callback.h): where and how often a debug callback runs (once per call
// with whole values; each device's block inside shard_map or when partitioned; once per slice
// under vmap), a pure callback's results, its sharing of one call among its results, its absence
// when unused, grad and vmap, and the errors. Part of jit_property_test (its main initializes 4
// CPU devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/program_parse.h"

namespace {

namespace jnp = spmd::numpy;
namespace lax = spmd::lax;
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

// 0, 1, 2, … as float32, laid out as `spec` on line().
Array counting(const Shape& shape, const P& spec, float start = 0) {
  std::vector<float> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return spmd::device_put(HostArray::from_vector(v, shape), NamedSharding(line(), spec));
}

std::vector<float> floats(const HostArray& h) {
  const auto d = h.data<float>();
  return {d.begin(), d.end()};
}

// What a callback saw, from any device thread.
struct Seen {
  std::mutex mu;
  std::vector<std::vector<float>> calls;
  lax::HostFunction record() {
    return [this](std::vector<HostArray> v) {
      const std::lock_guard lock(mu);
      calls.push_back(floats(v.at(0)));
      return std::vector<HostArray>{};
    };
  }
};

TEST(HostCallback, ADebugCallbackRunsOncePerCallWithTheWholeValue) {
  Seen seen;
  auto f = spmd::jit([&](const Tensor& t) {
    lax::debug_callback("record", {t}, seen.record());
    return t * 2.0;
  });
  const Array x = counting({8}, P("x"));
  f(x);
  f(counting({8}, P("x"), 10));
  ASSERT_EQ(seen.calls.size(), 2U);
  EXPECT_EQ(seen.calls[0], floats(x.to_host()));
  EXPECT_EQ(seen.calls[1][7], 17.0f);
  EXPECT_NE(f.lower(x).as_text().find("debug_callback"), std::string::npos);
}

TEST(HostCallback, AProgramOfEffectsAloneRuns) {
  Seen seen;
  auto f = spmd::jit([&](const Tensor& t) {
    lax::debug_callback("record", {jnp::sum(t, {0})}, seen.record());
    return std::vector<Tensor>{};
  });
  f(counting({8}, P("x")));
  ASSERT_EQ(seen.calls.size(), 1U);
  EXPECT_EQ(seen.calls[0], std::vector<float>{28.0f});
}

TEST(HostCallback, InsideShardMapOrPartitionedEachDeviceCallsWithItsBlock) {
  Seen in_body, partitioned, uneven;
  auto f = spmd::jit([&](const Tensor& t, const Tensor& odd) {
    const Tensor y = lax::shard_map(
        [&](const Tensor& b) {
          lax::debug_callback("block", {b}, in_body.record());
          return b + 1.0;
        },
        line(), {P("x")}, P("x"))(t);
    lax::debug_callback("shard", {y}, partitioned.record(), /*partitioned=*/true);
    lax::debug_callback("uneven", {odd}, uneven.record(), /*partitioned=*/true);
    return y;
  });
  f(counting({8}, P("x")), counting({6}, P("x")));
  const auto sorted = [](std::vector<std::vector<float>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::vector<std::vector<float>> blocks = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  EXPECT_EQ(sorted(in_body.calls), blocks);
  const std::vector<std::vector<float>> plus_one = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  EXPECT_EQ(sorted(partitioned.calls), plus_one);
  // 6 over 4 devices splits unevenly: each device sees the whole value, never padding.
  ASSERT_EQ(uneven.calls.size(), 4U);
  for (const auto& c : uneven.calls) EXPECT_EQ(c, (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(HostCallback, APureCallbackRunsOncePerDeviceForAllItsResults) {
  std::atomic<int> calls{0};
  const lax::HostFunction twice_and_sum = [&](std::vector<HostArray> v) {
    ++calls;
    std::vector<float> d = floats(v.at(0));
    float total = 0;
    for (float& e : d) {
      total += e;
      e *= 2;
    }
    return std::vector<HostArray>{HostArray::from_vector(d, v[0].shape()),
                                  HostArray::from_vector(std::vector<float>{total}, {})};
  };
  auto f = spmd::jit([&](const Tensor& t) {
    auto out =
        lax::pure_callback("twice_and_sum", {t},
                           {{{8}, DType::kFloat32, {}}, {{}, DType::kFloat32, {}}}, twice_and_sum);
    return std::vector<Tensor>{out[0] + 1.0, out[1]};
  });
  const auto out = f(counting({8}, P("x")));
  EXPECT_EQ(floats(out[0].to_host())[3], 7.0f);
  EXPECT_EQ(floats(out[1].to_host()), std::vector<float>{28.0f});
  EXPECT_GE(calls.load(), 1);
  EXPECT_LE(calls.load(), 4);  // once per device, not once per result
}

TEST(HostCallback, APureCallbackNothingUsesIsNeverCalled) {
  std::atomic<int> calls{0};
  auto f = spmd::jit([&](const Tensor& t) {
    lax::pure_callback("unused", {t}, {{{8}, DType::kFloat32, {}}}, [&](std::vector<HostArray> v) {
      ++calls;
      return v;
    });
    return t + 1.0;
  });
  f(counting({8}, P("x")));
  EXPECT_EQ(calls.load(), 0);
}

TEST(HostCallback, FailuresNameTheCallbackAndTheDevice) {
  auto boom = spmd::jit([](const Tensor& t) {
    lax::debug_callback("boom", {t}, [](std::vector<HostArray>) -> std::vector<HostArray> {
      throw std::runtime_error("the user's failure");
    });
    return t;
  });
  try {
    boom(counting({8}, P("x")));
    FAIL() << "no error";
  } catch (const spmd::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'boom'"), std::string::npos) << what;
    EXPECT_NE(what.find("the user's failure"), std::string::npos) << what;
    EXPECT_NE(what.find("device 0 of process 0"), std::string::npos) << what;
  }
  auto wrong = spmd::jit([](const Tensor& t) {
    return lax::pure_callback("wrong", {t}, {{{8}, DType::kInt32, {}}},
                              [](std::vector<HostArray> v) { return v; })[0];
  });
  try {
    wrong(counting({8}, P("x")));
    FAIL() << "no error";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("returned f32[8] as result 0"), std::string::npos)
        << e.what();
  }
}

TEST(HostCallback, VmapUnrollsADebugCallbackAndMapsAPureOneAsAsked) {
  Seen rows;
  auto show = spmd::jit(spmd::vmap([&](const Tensor& r) {
    lax::debug_callback("row", {r}, rows.record());
    return r;
  }));
  show(counting({3, 2}, P()));
  EXPECT_EQ(rows.calls, (std::vector<std::vector<float>>{{0, 1}, {2, 3}, {4, 5}}));

  std::atomic<int> calls{0};
  const lax::HostFunction negate = [&](std::vector<HostArray> v) {
    ++calls;
    std::vector<float> d = floats(v.at(0));
    for (float& e : d) e = -e;
    return std::vector<HostArray>{HostArray::from_vector(d, v[0].shape())};
  };
  const auto mapped = [&](lax::VmapMethod how) {
    return spmd::jit(spmd::vmap([&, how](const Tensor& r) {
      return lax::pure_callback("negate", {r}, {{{2}, DType::kFloat32, {}}}, negate, how)[0];
    }));
  };
  EXPECT_THROW(mapped(lax::VmapMethod::kNone)(counting({3, 2}, P())), spmd::Unimplemented);
  for (const auto how : {lax::VmapMethod::kSequential, lax::VmapMethod::kExpandDims}) {
    calls = 0;
    const HostArray out = mapped(how)(counting({3, 2}, P())).to_host();
    EXPECT_EQ(floats(out), (std::vector<float>{0, -1, -2, -3, -4, -5}));
    // Sequential: a call per slice on each device; expand_dims: one on the batch.
    if (how == lax::VmapMethod::kExpandDims) {
      EXPECT_LE(calls.load(), 4);
    } else {
      EXPECT_GE(calls.load(), 3);
    }
  }
}

TEST(HostCallback, GradGoesPastADebugCallbackAndRefusesAPureOne) {
  Seen seen;
  auto g = spmd::jit(spmd::grad([&](const Tensor& t) {
    lax::debug_callback("primal", {t}, seen.record());
    return jnp::sum(t * t);
  }));
  const HostArray dx = g(counting({8}, P("x"))).to_host();
  EXPECT_EQ(floats(dx)[3], 6.0f);
  ASSERT_EQ(seen.calls.size(), 1U);
  EXPECT_EQ(seen.calls[0][3], 3.0f);
  auto pure = spmd::jit(spmd::grad([](const Tensor& t) {
    return jnp::sum(lax::pure_callback("id", {t}, {{{8}, DType::kFloat32, {}}},
                                       [](std::vector<HostArray> v) { return v; })[0]);
  }));
  EXPECT_THROW(pure(counting({8}, P("x"))), spmd::InvalidArgument);
}

TEST(HostCallback, AProgramTextWithACallbackIsNotReadBack) {
  auto f = spmd::jit([](const Tensor& t) {
    lax::debug_callback("show", {t},
                        [](std::vector<HostArray>) { return std::vector<HostArray>{}; });
    return t;
  });
  EXPECT_NE(f.lower(counting({8}, P("x")))
                .as_text()
                .find("debug_callback bool[] %1 callback=show result=-1 per_device=false"),
            std::string::npos)
      << f.lower(counting({8}, P("x"))).as_text();
  EXPECT_THROW(spmd::compiler::parse_program(
                   "%0 = parameter f32[8] index=0 sharding=PartitionSpec('x',)\n"
                   "%1 = debug_callback bool[] %0 callback=show result=-1 per_device=false\n"
                   "return %0\n",
                   line()),
               spmd::InvalidArgument);
  EXPECT_THROW(lax::debug_callback("outside", {}, nullptr), spmd::InvalidArgument);
  EXPECT_FALSE(lax::tracing());
}

}  // namespace
