// jit's fast path (JitCore::cached/run over jit/executable.h): a call is found again by its
// inputs' Sharding objects or equal shardings, never for another structure or layout; uneven
// splits keep the padded path; the outputs are the Arrays the checked constructor builds; and a
// jitted function outlives a runtime session. Part of jit_test: CTest runs each case in a
// process of its own, so each starts its own session.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <numeric>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Tensor;
using spmd::detail::JitCore;

// 1, 2, …, n as float32.
HostArray counting(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0f);
  return HostArray::from_vector(v, {n});
}

// x - mean(x): a program with an all-reduce when x is split.
JitCore::TraceFn centre_of(int& traces) {
  return [&traces](std::vector<Tensor>& p, std::vector<std::string>&) {
    ++traces;
    return std::vector<Tensor>{p[0] - jnp::mean(p[0])};
  };
}

void expect_centred(const Array& out, int64_t n) {
  const HostArray h = out.to_host();
  ASSERT_EQ(h.shape(), spmd::Shape{n});
  const float mean = static_cast<float>(n + 1) / 2;
  for (int64_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(h.data<float>()[i], i + 1 - mean) << i;
}

bool start(int devices) {
  try {
    spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = devices});
    return true;
  } catch (const spmd::FailedPrecondition&) {
    return false;  // not a process of its own
  }
}

TEST(CachedCall, FoundForTheSameOrAnEqualShardingOnly) {
  if (!start(4)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  JitCore core(spmd::JitOptions{.name = "centre"});
  int traces = 0;
  const JitCore::TraceFn centre = centre_of(traces);
  const std::vector<int> one{1};
  std::vector<std::string> keys;
  auto call = [&](const Array& x) {
    const std::vector<const Array*> in{&x};
    return core.call(in, one, "a;", centre, keys).at(0);
  };
  auto cached = [&](const Array& x, const std::string& structure = "a;") {
    const std::vector<const Array*> in{&x};
    return core.cached(in, structure) != nullptr;
  };

  const Array x = spmd::device_put(counting(8), NamedSharding(mesh, P("x")));
  EXPECT_FALSE(cached(x));
  expect_centred(call(x), 8);
  EXPECT_TRUE(cached(x));         // the same Sharding object
  EXPECT_FALSE(cached(x, "b;"));  // another structure
  const Array y = spmd::device_put(counting(8), NamedSharding(mesh, P("x")));
  ASSERT_NE(&y.sharding(), &x.sharding());
  EXPECT_TRUE(cached(y));  // an equal NamedSharding
  expect_centred(call(y), 8);
  EXPECT_EQ(traces, 1);

  const Array whole = spmd::device_put(counting(8), NamedSharding(mesh, P()));
  EXPECT_FALSE(cached(whole));  // another layout
  expect_centred(call(whole), 8);
  EXPECT_TRUE(cached(whole));
  EXPECT_EQ(traces, 2);

  const Array uneven = spmd::device_put(counting(10), NamedSharding(mesh, P("x")));
  expect_centred(call(uneven), 10);
  expect_centred(call(uneven), 10);
  EXPECT_FALSE(cached(uneven));  // 10 over 4 runs padded, on the path that pads
  EXPECT_EQ(traces, 3);
}

TEST(CachedCall, OutputsAreTheArraysTheCheckedConstructorBuilds) {
  if (!start(4)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
  const spmd::Mesh grid(spmd::devices(), {2, 2}, {"a", "b"});
  auto fn = spmd::jit([](const Tensor& x, const Tensor& w) {
    return std::vector<Tensor>{jnp::matmul(x, w), x * 2.0f, jnp::sum(x)};
  });
  std::vector<float> v(16);
  std::iota(v.begin(), v.end(), 0.0f);
  const Array x = spmd::device_put(HostArray::from_vector(v, {4, 4}), NamedSharding(grid, P("a")));
  const Array w =
      spmd::device_put(HostArray::from_vector(v, {4, 4}), NamedSharding(grid, P(spmd::None, "b")));
  for (int round = 0; round < 3; ++round) {  // the first call traces; the others are cached
    const std::vector<Array> out = fn(x, w);
    ASSERT_EQ(out.size(), 3u);
    for (const Array& a : out) {
      EXPECT_NO_THROW(Array(a.shape(), a.dtype(), a.sharding_ptr(), a.addressable_shards(), 0))
          << a.to_string();
    }
    const HostArray mm = out[0].to_host();
    const HostArray twice = out[1].to_host();
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        float expected = 0;
        for (int k = 0; k < 4; ++k) expected += v[i * 4 + k] * v[k * 4 + j];
        EXPECT_FLOAT_EQ(mm.data<float>()[i * 4 + j], expected);
        EXPECT_FLOAT_EQ(twice.data<float>()[i * 4 + j], 2 * v[i * 4 + j]);
      }
    }
    EXPECT_FLOAT_EQ(out[2].to_host().data<float>()[0], 120.0f);
  }
}

TEST(CachedCall, PaddedOutputsAreCheckedArraysCutToTheirParts) {
  if (!start(4)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  // 10 over 4 devices: blocks of 3, the last device holding 1 element.
  auto fn = spmd::jit([](const Tensor& x) { return std::vector<Tensor>{x * 2.0f, jnp::sum(x)}; });
  const Array x = spmd::device_put(counting(10), NamedSharding(mesh, P("x")));
  for (int round = 0; round < 2; ++round) {
    const std::vector<Array> out = fn(x);
    ASSERT_EQ(out.size(), 2u);
    for (const Array& a : out) {
      EXPECT_NO_THROW(Array(a.shape(), a.dtype(), a.sharding_ptr(), a.addressable_shards(), 0))
          << a.to_string();
    }
    EXPECT_EQ(out[0].addressable_shards().back().data.shape(), spmd::Shape{1});
    const HostArray twice = out[0].to_host();
    for (int i = 0; i < 10; ++i) EXPECT_FLOAT_EQ(twice.data<float>()[i], 2.0f * (i + 1)) << i;
    EXPECT_FLOAT_EQ(out[1].to_host().data<float>()[0], 55.0f);
  }
}

TEST(CachedCall, AFunctionOfNoOutputsReturnsNoneOnEveryPath) {
  if (!start(4)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  JitCore core(spmd::JitOptions{.name = "nothing"});
  int traces = 0;
  const JitCore::TraceFn nothing = [&traces](std::vector<Tensor>&, std::vector<std::string>&) {
    ++traces;
    return std::vector<Tensor>{};
  };
  const std::vector<int> one{1};
  std::vector<std::string> keys;
  // Laid out as the program asks (the fast path after the first call), and elsewhere.
  const Array split = spmd::device_put(counting(8), NamedSharding(mesh, P("x")));
  const Array whole = spmd::device_put(counting(8), NamedSharding(mesh, P()));
  for (const Array* x : {&split, &split, &whole}) {
    const Array* args[] = {x};
    EXPECT_TRUE(core.call(args, one, "(x)", nothing, keys).empty());
  }
  EXPECT_EQ(traces, 2);  // one per layout
}

TEST(CachedCall, AnEmptyArrayRunsAndStaysEmpty) {
  if (!start(4)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  auto fn = spmd::jit([](const Tensor& x) { return std::vector<Tensor>{x * 2.0f, jnp::sum(x)}; });
  const Array x = spmd::device_put(HostArray::zeros(spmd::DType::kFloat32, {0, 3}),
                                   NamedSharding(mesh, P("x")));
  for (int round = 0; round < 2; ++round) {
    const std::vector<Array> out = fn(x);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape(), (spmd::Shape{0, 3}));
    EXPECT_EQ(out[0].to_host().size(), 0);
    EXPECT_EQ(out[1].to_host().data<float>()[0], 0.0f);
  }
}

TEST(CachedCall, AnOutputLeavesInTheOneShardingObjectItsProgramHolds) {
  if (!start(4)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
  const spmd::Mesh mesh(spmd::devices(), {2, 2}, {"a", "b"});
  const NamedSharding asked(mesh, P(spmd::None, "b"));
  auto fn = spmd::jit(
      [](const Tensor& x) {
        return std::vector<Tensor>{x + 1.0f, x * 3.0f};
      },
      {.out_shardings = {asked}});
  std::vector<float> v(16);
  std::iota(v.begin(), v.end(), 0.0f);
  const Array x = spmd::device_put(HostArray::from_vector(v, {4, 4}), NamedSharding(mesh, P("a")));
  const std::vector<Array> first = fn(x);
  const std::vector<Array> second = fn(x);
  EXPECT_EQ(first[0].sharding().to_string(), asked.to_string());
  EXPECT_EQ(first[1].sharding().to_string(), NamedSharding(mesh, P("a")).to_string());
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(first[k].sharding_ptr(), second[k].sharding_ptr()) << "output " << k;
  }
  // The return line holds the asked sharding; the per-device program moves the value there.
  const spmd::Lowered lowered = fn.lower(x);
  EXPECT_NE(lowered.global_text().find("return %2 sharding=PartitionSpec(None, 'b') %4"),
            std::string::npos)
      << lowered.global_text();
  EXPECT_NE(lowered.as_text().find("PartitionSpec(None, 'b')"), std::string::npos)
      << lowered.as_text();
}

// A jitted function made before a session runs in the next one: its planned calls hold the
// session's axis groups only weakly and lay themselves out again once those are gone.
TEST(CachedCall, AJittedFunctionOutlivesTheSession) {
  auto fn = spmd::jit([](const Tensor& x) { return x - jnp::mean(x); });
  for (int session = 0; session < 2; ++session) {
    if (!start(2)) GTEST_SKIP() << "needs a process of its own, as CTest runs each case";
    const spmd::Mesh mesh(spmd::devices(), {"x"});
    const Array x = spmd::device_put(counting(6), NamedSharding(mesh, P("x")));
    expect_centred(fn(x), 6);
    expect_centred(fn(fn(x)), 6);  // the mean of a centred array is 0
    spmd::distributed::shutdown();
  }
}

}  // namespace
