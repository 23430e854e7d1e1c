// kernels::ThreadTeam (kernels/thread_team.h) and the kernels that split their work over it:
// parallel_for covers every element once in aligned parts, rethrows a part's exception and runs
// helpers in the caller's floating-point mode; products, reductions and element-wise chains give
// the same bytes on teams of 1 to 4 threads; and device threads with teams of their own multiply
// at once, thousands of times, each product checked against plain loops (Debian's sequential
// OpenBLAS once handed two threads one buffer: kernels/matmul.cc).
#include "kernels/thread_team.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kernels/backend.h"
#include "kernels/chain.h"
#include "kernels/float_environment.h"
#include "kernels/layout.h"
#include "kernels/matmul.h"
#include "kernels/ordering.h"
#include "kernels/reduce.h"
#include "kernels/scatter.h"
#include "kernels/ynn_math.h"
#include "kernels/ynn_reduce.h"
#include "spmd/error.h"

namespace {

using spmd::DType;
using spmd::Shape;
namespace k = spmd::kernels;

std::vector<float> filled(size_t n, double seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(seed + 0.37 * double(i)));
  return v;
}

template <class T>
const std::byte* bytes(const std::vector<T>& v) {
  return reinterpret_cast<const std::byte*>(v.data());
}
template <class T>
std::byte* bytes(std::vector<T>& v) {
  return reinterpret_cast<std::byte*>(v.data());
}

TEST(ThreadTeam, ParallelForCoversEveryIndexOnceInAlignedParts) {
  for (int size : {1, 2, 3, 4}) {
    k::ThreadTeam team(size);
    const k::TeamScope scope(&team);
    EXPECT_EQ(k::team_size(), size);
    for (int64_t n : {0, 1, 63, 64, 1000, 4097}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> parts;
      k::parallel_for(n, 16, 8, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) ++seen[static_cast<size_t>(i)];
        std::lock_guard lock(mu);
        parts.emplace_back(begin, end);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)], 1) << i;
      EXPECT_LE(parts.size(), static_cast<size_t>(size));
      for (const auto& [begin, end] : parts) {
        EXPECT_EQ(begin % 8, 0) << "a part starting at " << begin;
        if (parts.size() > 1) {
          EXPECT_GE(end - begin, 1);
        }
      }
      if (n < 32) {
        EXPECT_LE(parts.size(), 1u) << "n < 2 × grain runs as one part";
      }
    }
  }
  EXPECT_EQ(k::team_size(), 1) << "the scope restores no team";
}

TEST(ThreadTeam, APartsExceptionReachesTheCallerAfterTheOthersFinish) {
  k::ThreadTeam team(3);
  const k::TeamScope scope(&team);
  std::atomic<int> finished{0};
  EXPECT_THROW(k::parallel_for(300, 1, 1,
                               [&](int64_t begin, int64_t) {
                                 if (begin != 0) throw std::runtime_error("part failed");
                                 std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                 ++finished;
                               }),
               std::runtime_error);
  EXPECT_EQ(finished, 1);
  // The team works on after a failure.
  std::atomic<int64_t> sum{0};
  k::parallel_for(300, 1, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum, 300);
}

// run() with more parts than threads, and a part that a helper holds until the caller has run
// every other part: the caller takes the parts no helper has taken instead of waiting for one
// (the old hand-off gave each thread one part and dropped the rest). The hold has a deadline, so
// a caller that waited for the helper fails the test rather than hanging it.
TEST(ThreadTeam, TheCallerRunsThePartsNoHelperHasTaken) {
  for (int size : {1, 2, 3}) {
    k::ThreadTeam team(size);
    constexpr int kParts = 12;
    struct Context {
      std::thread::id caller = std::this_thread::get_id();
      std::atomic<int> runs[kParts] = {};
      std::atomic<int> by_caller{0};
      std::atomic<bool> held{false};
      std::atomic<bool> hold_timed_out{false};
    } context;
    team.run(
        kParts,
        [](void* raw, int i) {
          auto& c = *static_cast<Context*>(raw);
          ++c.runs[i];
          if (std::this_thread::get_id() == c.caller) {
            ++c.by_caller;
            return;
          }
          if (c.held.exchange(true)) return;  // the first part a helper takes: hold it
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
          while (c.by_caller.load() < kParts - 1) {
            if (std::chrono::steady_clock::now() > until) {
              c.hold_timed_out = true;
              return;
            }
            std::this_thread::yield();
          }
        },
        &context);
    for (int i = 0; i < kParts; ++i)
      EXPECT_EQ(context.runs[i], 1) << "part " << i << ", team " << size;
    EXPECT_FALSE(context.hold_timed_out) << "the caller waited for a helper, team " << size;
    EXPECT_GE(context.by_caller, kParts - 1) << "team " << size;
  }
}

// Many runs of short parts back to back, and some after the helpers have gone to sleep: each part
// of each run runs once. (A stress test: a helper that took a part of one run with the job of
// the run before it would show as a part run twice or not at all, but that window is a few
// instructions wide, and this test does not reliably open it.)
TEST(ThreadTeam, EveryPartOfEveryRunRunsOnceWhateverTheHelpersTiming) {
  k::ThreadTeam team(3);
  for (int run = 0; run < 20000; ++run) {
    if (run % 2000 == 1999) std::this_thread::sleep_for(k::ThreadTeam::kSpin * 3);
    const int parts = 2 + run % 6;
    std::vector<std::atomic<int>> counts(static_cast<size_t>(parts));
    team.run(
        parts,
        [](void* raw, int i) {
          for (volatile int spin = 0; spin < 50 * (i % 4); spin = spin + 1) {
          }
          ++(*static_cast<std::vector<std::atomic<int>>*>(raw))[static_cast<size_t>(i)];
        },
        &counts);
    for (int i = 0; i < parts; ++i) {
      ASSERT_EQ(counts[static_cast<size_t>(i)], 1) << "run " << run << ", part " << i;
    }
  }
  EXPECT_THROW(team.run(
                   -1, [](void*, int) {}, nullptr),
               spmd::InvalidArgument);
  EXPECT_THROW(team.run(
                   k::ThreadTeam::kMaxParts + 1, [](void*, int) {}, nullptr),
               spmd::InvalidArgument);
}

TEST(ThreadTeam, AParallelForInsideAPartRunsInline) {
  k::ThreadTeam team(2);
  const k::TeamScope scope(&team);
  std::atomic<int64_t> total{0};
  std::atomic<int> nested_teams{0};
  k::parallel_for(4, 1, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      nested_teams += k::team_size() > 1 ? 1 : 0;
      k::parallel_for(10000, 1, 1, [&](int64_t b, int64_t e) { total += e - b; });
    }
  });
  EXPECT_EQ(total, 40000);
  EXPECT_EQ(nested_teams, 0) << "a part saw a team of its own";
  EXPECT_EQ(k::team_size(), 2) << "the caller's team is back after the parts";
}

TEST(ThreadTeam, HelpersComputeInTheCallersFloatingPointMode) {
#if defined(__x86_64__) || defined(__aarch64__)
  k::ThreadTeam team(2);
  const k::TeamScope scope(&team);
  std::vector<float> out(2);
  auto halve_tiny = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      volatile float x = std::numeric_limits<float>::min();
      out[static_cast<size_t>(i)] = x * 0.5f;
    }
  };
  {
    const k::FlushSubnormalsScope flush;
    k::parallel_for(2, 1, 1, halve_tiny);
  }
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f) << "the helper's part did not flush the subnormal";
  k::parallel_for(2, 1, 1, halve_tiny);
  EXPECT_GT(out[1], 0.0f) << "the helper kept flushing after its part";
#else
  GTEST_SKIP() << "no flush-to-zero control on this processor";
#endif
}

// f() on no team and on teams of 2, 3 and 4 threads: each result's bytes.
template <class F>
std::vector<std::vector<std::byte>> on_teams(F f) {
  std::vector<std::vector<std::byte>> results{f()};
  for (int size : {2, 3, 4}) {
    k::ThreadTeam team(size);
    const k::TeamScope scope(&team);
    results.push_back(f());
  }
  return results;
}

TEST(ThreadTeam, ProductsAreTheSameBytesOnEveryTeam) {
  struct Case {
    k::MatmulShape s;
    DType dtype;
  };
  const Case cases[] = {
      {{.m = 256, .k = 96, .n = 80}, DType::kFloat32},
      {{.m = 40, .k = 300, .n = 512, .transpose_b = true}, DType::kFloat32},
      {{.m = 200, .k = 128, .n = 72, .transpose_a = true, .transpose_b = true}, DType::kFloat64},
      {{.batch = 5, .m = 64, .k = 128, .n = 96}, DType::kFloat32},
      {{.m = 7, .k = 5, .n = 3}, DType::kFloat32},
      // extents under 512, cut in panels of 128: two of columns, three of rows
      {{.m = 256, .k = 256, .n = 256}, DType::kFloat32},
      {{.m = 384, .k = 200, .n = 96, .transpose_a = true}, DType::kFloat32},
  };
  for (const Case& c : cases) {
    const size_t width = spmd::dtype_size(c.dtype);
    std::vector<std::byte> a(size_t(c.s.batch * c.s.m * c.s.k) * width);
    std::vector<std::byte> b(size_t(c.s.batch * c.s.k * c.s.n) * width);
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::byte((i * 37 + 11) % 61);
    for (size_t i = 0; i < b.size(); ++i) b[i] = std::byte((i * 53 + 5) % 59);
    const auto results = on_teams([&] {
      std::vector<std::byte> out(size_t(c.s.batch * c.s.m * c.s.n) * width);
      k::matmul(c.dtype, c.s, a.data(), b.data(), out.data());
      return out;
    });
    for (size_t t = 1; t < results.size(); ++t) {
      EXPECT_EQ(results[t], results[0]) << c.s.m << "x" << c.s.k << "x" << c.s.n << ", team " << t;
    }
  }
}

TEST(ThreadTeam, ReductionsAreTheSameBytesOnEveryTeam) {
  const Shape shapes[] = {{4096, 33}, {3, 20000},   {20000, 3},    {1, 70000},
                          {70000},    {2, 5000, 7}, {8, 512, 512}, {1, 3000, 64}};
  for (const Shape& shape : shapes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> x = filled(static_cast<size_t>(n), static_cast<double>(shape.size()));
    x[static_cast<size_t>(n / 3)] = -0.0f;
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      for (k::Reduce op : {k::Reduce::kSum, k::Reduce::kMax, k::Reduce::kMin}) {
        const auto results = on_teams([&] {
          std::vector<float> out(static_cast<size_t>(n / shape[static_cast<size_t>(axis)]));
          k::reduce(op, DType::kFloat32, bytes(x), shape, axis, DType::kFloat32, bytes(out));
          std::vector<std::byte> raw(out.size() * sizeof(float));
          std::memcpy(raw.data(), out.data(), raw.size());
          return raw;
        });
        for (size_t t = 1; t < results.size(); ++t) {
          EXPECT_EQ(results[t], results[0])
              << k::name(op) << " over axis " << axis << " of a shape of " << n << ", team " << t;
        }
      }
    }
  }
}

// Integer sums (wrapping), maxima and minima over a short last axis, many rows at once, against
// each row folded alone, on every team: widths around the short-row loop's limit, the type's
// extremes among the values.
template <class T>
void expect_short_rows_reduce(DType dtype) {
  std::mt19937_64 bits(static_cast<uint64_t>(dtype) + 7);
  for (const int64_t width :
       {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{63}, int64_t{64}, int64_t{65}}) {
    const int64_t rows = 5000;
    std::vector<T> x(static_cast<size_t>(rows * width));
    for (T& v : x) {
      const auto r = bits() % 6;
      v = r == 0   ? std::numeric_limits<T>::max()
          : r == 1 ? std::numeric_limits<T>::min()
                   : static_cast<T>(bits());
    }
    for (const k::Reduce op : {k::Reduce::kSum, k::Reduce::kMax, k::Reduce::kMin}) {
      const auto results = on_teams([&] {
        std::vector<T> out(static_cast<size_t>(rows));
        k::reduce(op, dtype, bytes(x), {rows, width}, 1, dtype, bytes(out));
        std::vector<std::byte> raw(out.size() * sizeof(T));
        std::memcpy(raw.data(), out.data(), raw.size());
        return raw;
      });
      for (int64_t r = 0; r < rows; ++r) {
        uint64_t sum = 0;
        T high = x[static_cast<size_t>(r * width)], low = high;
        for (int64_t j = 0; j < width; ++j) {
          const T v = x[static_cast<size_t>(r * width + j)];
          sum += static_cast<uint64_t>(v);
          high = std::max(high, v);
          low = std::min(low, v);
        }
        const T want = op == k::Reduce::kSum   ? static_cast<T>(sum)
                       : op == k::Reduce::kMax ? high
                                               : low;
        for (size_t t = 0; t < results.size(); ++t) {
          T got;
          std::memcpy(&got, results[t].data() + static_cast<size_t>(r) * sizeof(T), sizeof(T));
          ASSERT_EQ(got, want) << spmd::dtype_name(dtype) << " " << k::name(op) << ", rows of "
                               << width << ", row " << r << ", team " << t;
        }
      }
    }
  }
}

TEST(ThreadTeam, IntegerReductionsOfManyShortRowsAreEachRowFoldedAlone) {
  expect_short_rows_reduce<int8_t>(DType::kInt8);
  expect_short_rows_reduce<int32_t>(DType::kInt32);
  expect_short_rows_reduce<uint16_t>(DType::kUInt16);
  expect_short_rows_reduce<uint64_t>(DType::kUInt64);
}

// Broadcasts against an index-by-index reference, on every team: the operand's dimensions one
// run of the result's (each element repeated, the block tiled or, past 16 KiB, copied, both, a
// scalar) and interleaved
// with broadcast ones (Eigen's path), elements of every dtype's size (1 to 8 bytes).
TEST(ThreadTeam, BroadcastsPutEachOperandElementWhereItsIndexSays) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1000, 1}, {1000, 4}},    {{1000, 1, 1}, {1000, 3, 5}}, {{4}, {999, 4}},
      {{70}, {3, 1000, 70}},     {{1, 6, 1}, {5, 6, 7}},       {{}, {17, 33}},
      {{6, 1, 7}, {6, 300, 7}},  {{2, 1}, {3, 2, 100}},        {{1}, {1}},
      {{5, 1, 3}, {4, 5, 2, 3}}, {{8192}, {3, 8192}},          {{4096, 1}, {2, 4096, 2}}};
  for (const size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    for (const auto& [from, to] : cases) {
      const auto n_in = static_cast<size_t>(spmd::shape_size(from));
      const auto n_out = static_cast<size_t>(spmd::shape_size(to));
      std::vector<std::byte> x(n_in * size);
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::byte>(i * 37 + 11);
      const auto results = on_teams([&] {
        std::vector<std::byte> out(n_out * size);
        k::broadcast(size, x.data(), from, out.data(), to);
        return out;
      });
      Shape padded(to.size() - from.size(), 1);
      padded.insert(padded.end(), from.begin(), from.end());
      for (size_t o = 0; o < n_out; ++o) {
        size_t rest = o, at = 0, stride = 1;
        for (size_t d = to.size(); d-- > 0;) {
          const auto extent = static_cast<size_t>(to[d]);
          const size_t index = rest % extent;
          rest /= extent;
          if (padded[d] != 1) at += index * stride;
          stride *= static_cast<size_t>(padded[d]);
        }
        for (size_t t = 0; t < results.size(); ++t) {
          ASSERT_EQ(std::memcmp(results[t].data() + o * size, x.data() + at * size, size), 0)
              << size << "-byte elements, [" << fmt::format("{}", fmt::join(from, ", ")) << "] to ["
              << fmt::format("{}", fmt::join(to, ", ")) << "], element " << o << ", team " << t;
        }
      }
    }
  }
}

// The CPU backend's fill (jnp.full) is the value converted to the dtype once and repeated: the
// bytes of converting it element by element, for every dtype and a value of each kind (a
// fraction, -0, NaN, infinity, one past float16's range, one an int8 wraps), at lengths that
// split over the team and one that does not, the same on every team.
TEST(ThreadTeam, AFillIsTheValueConvertedOnceAndRepeatedOnEveryTeam) {
  const double values[] = {0.1, -0.0, std::nan(""), -INFINITY, 70000.0, 300.0, -3.75};
  for (int d = 0; d <= static_cast<int>(DType::kFloat64); ++d) {
    const auto dtype = static_cast<DType>(d);
    const size_t size = spmd::dtype_size(dtype);
    for (const double value : values) {
      for (const int64_t n : {int64_t{1}, int64_t{37}, int64_t{300'000}}) {
        std::vector<std::byte> want(static_cast<size_t>(n) * size);
        k::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(&value), 1},
                   want.data(), n);
        const auto filled = on_teams([&] {
          std::vector<std::byte> out(static_cast<size_t>(n) * size);
          k::cpu_backend().fill(dtype, value, out.data(), n);
          return out;
        });
        for (size_t t = 0; t < filled.size(); ++t) {
          ASSERT_EQ(filled[t], want) << spmd::dtype_name(dtype) << " full of " << value << ", " << n
                                     << " elements, team " << t;
        }
      }
    }
  }
}

// Transposes, broadcasts, slices and concatenations split over the team: the same bytes on
// every team, leading dimensions of 1, 3 and many, and a transpose against plain loops.
TEST(ThreadTeam, LayoutChangesAreTheSameBytesOnEveryTeam) {
  const Shape shape{6, 300, 70};
  std::vector<uint32_t> in(size_t(6 * 300 * 70));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  const auto* x = reinterpret_cast<const std::byte*>(in.data());
  const auto bytes = [](const Shape& s) { return size_t(spmd::shape_size(s)) * 4; };
  const int perm[] = {2, 0, 1};
  const auto transposed = on_teams([&] {
    std::vector<std::byte> out(bytes(shape));
    k::transpose(4, x, shape, perm, out.data());
    return out;
  });
  const auto broadcast = on_teams([&] {
    std::vector<std::byte> out(bytes({3, 6, 300, 70}));
    k::broadcast(4, x, shape, out.data(), {3, 6, 300, 70});
    return out;
  });
  const auto row_broadcast = on_teams([&] {  // a leading dimension of one, widened
    std::vector<std::byte> out(bytes({1, 1000, 70}));
    k::broadcast(4, x, {1, 1, 70}, out.data(), {1, 1000, 70});
    return out;
  });
  const int64_t start[] = {1, 10, 5};
  const auto sliced = on_teams([&] {
    std::vector<std::byte> out(bytes({5, 280, 60}));
    k::slice(4, x, shape, start, {5, 280, 60}, out.data());
    return out;
  });
  const auto joined = on_teams([&] {
    std::vector<std::byte> out(2 * bytes(shape));
    const std::byte* parts[] = {x, x};
    const Shape shapes[] = {shape, shape};
    k::concatenate(4, parts, shapes, 1, out.data());
    return out;
  });
  for (const auto* results : {&transposed, &broadcast, &row_broadcast, &sliced, &joined}) {
    for (size_t t = 1; t < results->size(); ++t) EXPECT_EQ((*results)[t], (*results)[0]);
  }
  std::vector<std::byte> whole(size_t{3} << 20);  // several parts' worth
  for (size_t i = 0; i < whole.size(); ++i) whole[i] = std::byte(i * 131 % 251);
  const auto copied = on_teams([&] {  // from an odd address, a length no part size divides
    std::vector<std::byte> out(whole.size() - 13);
    k::copy_bytes(whole.data() + 13, out.size(), out.data());
    return out;
  });
  for (const auto& c : copied) EXPECT_TRUE(std::equal(c.begin(), c.end(), whole.begin() + 13));
  const auto inner_broadcast = on_teams([&] {  // the leading dimension kept, a middle one widened
    std::vector<std::byte> out(bytes(shape));
    k::broadcast(4, x, {6, 1, 70}, out.data(), shape);
    return out;
  });
  for (const auto& result : inner_broadcast) {
    const auto* wide = reinterpret_cast<const uint32_t*>(result.data());
    for (int64_t a = 0; a < 6; ++a) {
      for (int64_t b = 0; b < 300; ++b) {
        for (int64_t c = 0; c < 70; ++c) {
          ASSERT_EQ(wide[(a * 300 + b) * 70 + c], in[size_t(a * 70 + c)]);
        }
      }
    }
  }
  const auto* got = reinterpret_cast<const uint32_t*>(transposed.back().data());  // team of 4
  for (int64_t a = 0; a < 6; ++a) {
    for (int64_t b = 0; b < 300; ++b) {
      for (int64_t c = 0; c < 70; ++c) {
        ASSERT_EQ(got[(c * 6 + a) * 300 + b], in[size_t((a * 300 + b) * 70 + c)]);
      }
    }
  }
}

// take over the middle axis of 6 × 300 × 70 (rows of 70 elements, six outer slabs) and over the
// last axis (rows of one element), indices out of range clamped: every element where index
// arithmetic puts it, on teams of 1 to 4 (the team splits the slabs' rows between its threads).
// strided_slice: every element read from start + i * step per dimension, against the index
// arithmetic written out, for each element size, ranks 1 to 3, steps of -3 to 3 (reversals,
// every second and third element, in order), one line long enough to be split over the team and
// many short ones, on every team.
TEST(ThreadTeam, AStridedSliceReadsEveryElementWhereItsStepsSay) {
  struct Case {
    Shape shape;
    std::vector<int64_t> start, step;
    Shape extent;
  };
  const std::vector<Case> cases = {
      {{100000}, {99999}, {-1}, {100000}},        // a flip, one line over the team
      {{100001}, {0}, {2}, {50001}},              // v[::2]
      {{100001}, {100000}, {-2}, {50001}},        // v[::-2]
      {{10}, {8}, {-3}, {3}},                     // v[8::-3]
      {{7}, {3}, {1}, {0}},                       // nothing
      {{300, 70}, {299, 0}, {-1, 3}, {300, 24}},  // rows flipped, every third column
      {{300, 70}, {5, 69}, {2, -1}, {100, 70}},
      {{6, 40, 50}, {5, 1, 49}, {-1, 3, -2}, {6, 13, 25}},
      {{6, 40, 50}, {0, 0, 0}, {1, 1, 1}, {6, 40, 50}}};
  for (size_t width : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}}) {
    for (const Case& c : cases) {
      const int64_t n = spmd::shape_size(c.shape), count = spmd::shape_size(c.extent);
      std::vector<std::byte> in(static_cast<size_t>(n) * width);
      for (size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i * 2654435761u >> 13);
      std::vector<std::byte> want(static_cast<size_t>(count) * width);
      for (int64_t i = 0; i < count; ++i) {  // element i's index, dimension by dimension
        int64_t rest = i, from = 0, stride = 1;
        for (size_t d = c.shape.size(); d-- > 0;) {
          from += (c.start[d] + rest % c.extent[d] * c.step[d]) * stride;
          rest /= c.extent[d];
          stride *= c.shape[d];
        }
        std::memcpy(want.data() + i * static_cast<int64_t>(width),
                    in.data() + from * static_cast<int64_t>(width), width);
      }
      const auto results = on_teams([&] {
        std::vector<std::byte> out(want.size());
        k::strided_slice(width, in.data(), c.shape, c.start, c.step, c.extent, out.data());
        return out;
      });
      for (size_t t = 0; t < results.size(); ++t) {
        EXPECT_EQ(results[t], want) << width << "-byte elements of (" << c.shape.size()
                                    << " dimensions, " << n << " elements), team " << t;
      }
    }
  }
}

// take with a fill (jnp.take's default mode): each index inside the axis copies its row, each
// outside it (negative, past the end) gives a row of the fill element, for every element size,
// rows of one element and of several, on every team; with every index inside, the clamping
// take's bytes.
TEST(ThreadTeam, ATakeWithAFillGivesItForEveryIndexOutsideTheAxis) {
  const std::vector<int32_t> indices = {3, -1, 0, 7, 6, -8, 2, 2, 100000};
  const auto count = static_cast<int64_t>(indices.size());
  for (size_t width : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}}) {
    for (const Shape& shape : {Shape{5, 7}, Shape{3, 7, 5}, Shape{2000, 7, 1}}) {
      const int64_t outer = shape[0], n = shape[1], inner = shape.size() > 2 ? shape[2] : 1;
      std::vector<std::byte> in(static_cast<size_t>(spmd::shape_size(shape)) * width);
      for (size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i * 2654435761u >> 11);
      std::vector<std::byte> fill(width);
      for (size_t b = 0; b < width; ++b) fill[b] = std::byte(0xA0 + b);
      const size_t row = static_cast<size_t>(inner) * width;
      std::vector<std::byte> want(static_cast<size_t>(outer * count) * row);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < count; ++c) {
          std::byte* to = want.data() + static_cast<size_t>(o * count + c) * row;
          const int64_t at = indices[static_cast<size_t>(c)];
          for (size_t b = 0; b < row; ++b) {
            to[b] =
                at >= 0 && at < n ? in[static_cast<size_t>(o * n + at) * row + b] : fill[b % width];
          }
        }
      }
      const auto results = on_teams([&] {
        std::vector<std::byte> out(want.size());
        k::take(width, in.data(), shape, 1, indices.data(), count, out.data(), fill.data());
        return out;
      });
      for (size_t t = 0; t < results.size(); ++t) {
        EXPECT_EQ(results[t], want)
            << width << "-byte elements, " << shape.size() << " dimensions, team " << t;
      }
      const std::vector<int32_t> inside = {3, 0, 6, 2};
      std::vector<std::byte> clamped(static_cast<size_t>(outer * 4) * row), filled(clamped.size());
      k::take(width, in.data(), shape, 1, inside.data(), 4, clamped.data());
      k::take(width, in.data(), shape, 1, inside.data(), 4, filled.data(), fill.data());
      EXPECT_EQ(filled, clamped) << width << "-byte elements, every index inside";
    }
  }
}

TEST(ThreadTeam, TakeCopiesEveryRowWhereItBelongsOnEveryTeam) {
  const Shape shape{6, 300, 70};
  std::vector<uint32_t> in(size_t(6 * 300 * 70));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  const auto* x = reinterpret_cast<const std::byte*>(in.data());
  std::vector<int32_t> indices(3000);
  for (size_t i = 0; i < indices.size(); ++i) {
    indices[i] = static_cast<int32_t>((i * 7919) % 340) - 20;  // some below 0, some past 299
  }
  const auto count = static_cast<int64_t>(indices.size());
  const auto clamped = [](int32_t i, int64_t n) { return std::clamp<int64_t>(i, 0, n - 1); };
  const auto rows = on_teams([&] {
    std::vector<std::byte> out(size_t(6 * count * 70) * 4);
    k::take(4, x, shape, 1, indices.data(), count, out.data());
    return out;
  });
  const auto elements = on_teams([&] {
    std::vector<std::byte> out(size_t(6 * 300 * count) * 4);
    k::take(4, x, shape, 2, indices.data(), count, out.data());
    return out;
  });
  for (size_t t = 0; t < rows.size(); ++t) {
    const auto* got = reinterpret_cast<const uint32_t*>(rows[t].data());
    for (int64_t a = 0; a < 6; ++a) {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t from = (a * 300 + clamped(indices[size_t(i)], 300)) * 70;
        for (int64_t c = 0; c < 70; ++c) {
          ASSERT_EQ(got[(a * count + i) * 70 + c], in[size_t(from + c)])
              << t << " " << a << " " << i;
        }
      }
    }
    const auto* each = reinterpret_cast<const uint32_t*>(elements[t].data());
    for (int64_t ab = 0; ab < 6 * 300; ++ab) {
      for (int64_t i = 0; i < count; ++i) {
        ASSERT_EQ(each[ab * count + i], in[size_t(ab * 70 + clamped(indices[size_t(i)], 70))])
            << t << " " << ab << " " << i;
      }
    }
  }
}

// A scatter-add and a scatter-max of float32 updates at repeated, sorted and out-of-range indices
// (a segment sum's) over 2 outer slabs: every team gives the bytes of one thread, each element's
// updates combined in their order, and an element no index names keeps its value.
TEST(ThreadTeam, ScattersAreTheSameBytesOnEveryTeam) {
  const int64_t n = 300, inner = 24, count = 20000;
  const Shape shape{2, n, inner};
  std::vector<float> updates(size_t(2 * count * inner)), start(size_t(2 * n * inner));
  for (size_t i = 0; i < updates.size(); ++i) updates[i] = std::sin(0.7f * float(i)) * 1e3f;
  for (size_t i = 0; i < start.size(); ++i) start[i] = std::cos(0.3f * float(i));
  std::vector<int32_t> indices(static_cast<size_t>(count));
  for (size_t i = 0; i < indices.size(); ++i) {
    indices[i] =
        static_cast<int32_t>(int64_t(i) * (n - 10) / count) - 2;  // -2 … n - 12, each many times
  }
  const auto scattered = [&](k::ScatterCombine how) {
    return on_teams([&] {
      std::vector<float> out = start;
      k::scatter(how, DType::kFloat32, reinterpret_cast<const std::byte*>(updates.data()), shape, 1,
                 indices.data(), count, reinterpret_cast<std::byte*>(out.data()));
      std::vector<std::byte> bytes(out.size() * 4);
      std::memcpy(bytes.data(), out.data(), bytes.size());
      return bytes;
    });
  };
  const auto at = [](const std::vector<std::byte>& bytes, size_t i) {
    float v = 0;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    return v;
  };
  float sum = start[0], most = start[0];  // index 0's, in order
  for (int64_t i = 0; i < count; ++i) {
    if (indices[size_t(i)] != 0) continue;
    sum += updates[size_t(i * inner)];
    most = std::max(most, updates[size_t(i * inner)]);
  }
  for (const auto& [how, want] :
       {std::pair{k::ScatterCombine::kAdd, sum}, std::pair{k::ScatterCombine::kMax, most}}) {
    const auto results = scattered(how);
    for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]) << "team " << t;
    EXPECT_EQ(at(results.back(), size_t(n - 1) * inner), start[size_t(n - 1) * inner]);
    EXPECT_EQ(at(results.back(), 0), want);
  }
}

// Transposes of every kind (whole matrices, batches of them, neighbours that move together,
// dimensions of one element, the general case) against index arithmetic, on teams of 1 to 4.
TEST(ThreadTeam, TransposesOfEveryKindMoveEachElementWhereItBelongs) {
  struct Case {
    Shape shape;
    std::vector<int> perm;
  };
  const Case cases[] = {{{700, 130}, {1, 0}},           {{5, 90, 70}, {0, 2, 1}},
                        {{4, 30, 6, 64}, {0, 2, 1, 3}}, {{4, 30, 6, 64}, {0, 2, 3, 1}},
                        {{3, 1, 50, 7}, {2, 1, 0, 3}},  {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}},
                        {{1, 1, 9}, {2, 0, 1}}};
  // Every permutation of rank 4 (rows of 40 kept, copied row by row, or the last dimension
  // moved, in strided tiles; odd sizes for the tiles' edges), and a few of rank 5 and 6.
  std::vector<Case> all(std::begin(cases), std::end(cases));
  std::vector<int> p = {0, 1, 2, 3};
  do {
    all.push_back({{3, 5, 19, 40}, p});
    all.push_back({{2, 17, 3, 33}, p});
  } while (std::next_permutation(p.begin(), p.end()));
  all.push_back({{2, 3, 4, 5, 36}, {4, 3, 2, 1, 0}});
  all.push_back({{2, 3, 4, 5, 36}, {1, 0, 3, 2, 4}});
  all.push_back({{3, 2, 2, 3, 2, 40}, {5, 0, 3, 1, 4, 2}});
  for (const Case& c : all) {
    const int64_t n = spmd::shape_size(c.shape);
    std::vector<uint16_t> in(static_cast<size_t>(n));
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i * 40503u);
    const auto results = on_teams([&] {
      std::vector<std::byte> out(in.size() * 2);
      k::transpose(2, reinterpret_cast<const std::byte*>(in.data()), c.shape, c.perm, out.data());
      return out;
    });
    const size_t rank = c.shape.size();
    std::vector<int64_t> strides(rank, 1);  // of the input
    for (size_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * c.shape[d];
    for (const auto& bytes : results) {
      const auto* got = reinterpret_cast<const uint16_t*>(bytes.data());
      for (int64_t o = 0; o < n; ++o) {  // result element o: its index, dimension by dimension
        int64_t rest = o, from = 0;
        for (size_t d = rank; d-- > 0;) {
          const int src = c.perm[d];
          const int64_t size = c.shape[static_cast<size_t>(src)];
          from += rest % size * strides[static_cast<size_t>(src)];
          rest /= size;
        }
        ASSERT_EQ(got[o], in[static_cast<size_t>(from)])
            << "element " << o << " of shape " << ::testing::PrintToString(c.shape) << " permuted "
            << ::testing::PrintToString(c.perm);
      }
    }
  }
}

TEST(ThreadTeam, HalfAndWideningReductionsAreTheSameBytesOnEveryTeam) {
  const Shape shape{64, 3000};
  const std::vector<float> x = filled(size_t{64} * 3000, 3.0);
  const std::vector<std::pair<DType, DType>> cases = {{DType::kFloat16, DType::kFloat16},
                                                      {DType::kBFloat16, DType::kBFloat16},
                                                      {DType::kFloat16, DType::kFloat32},
                                                      {DType::kInt8, DType::kInt32}};
  for (const auto& [in, out_dtype] : cases) {
    std::vector<std::byte> narrow(x.size() * spmd::dtype_size(in));
    k::convert(DType::kFloat32, in, {bytes(x), int64_t(x.size())}, narrow.data(),
               int64_t(x.size()));
    for (int axis : {0, 1}) {
      const size_t out_bytes = size_t(shape[size_t(1 - axis)]) * spmd::dtype_size(out_dtype);
      const DType from = in, to = out_dtype;
      const auto results = on_teams([&] {
        std::vector<std::byte> out(out_bytes);
        k::reduce(k::Reduce::kSum, from, narrow.data(), shape, axis, to, out.data());
        return out;
      });
      for (size_t t = 1; t < results.size(); ++t) {
        EXPECT_EQ(results[t], results[0])
            << spmd::dtype_name(from) << " to " << spmd::dtype_name(to) << " over " << axis;
      }
    }
  }
}

// A float16 or bfloat16 reduction, which widens rows or pieces of rows as it goes (never the
// whole array where the shape allows), equals the float32 reduction of the widened array,
// rounded once, on every team: contiguous rows, rows made a piece at a time, and the whole copy
// (few long rows, many small slabs). argmax likewise.
TEST(ThreadTeam, AHalfReductionIsTheFloat32ReductionOfItsWidenedValues) {
  const std::vector<Shape> shapes = {{64, 3000}, {3, 5, 4}, {2, 40000}, {1, 300000}, {40, 3, 9}};
  for (const Shape& shape : shapes) {
    const int64_t n = spmd::shape_size(shape);
    std::vector<float> x = filled(static_cast<size_t>(n), 5.0);
    x[7] = -0.0f;
    x[static_cast<size_t>(n) / 2] = NAN;  // one NaN: max and min NaN along it, the rest not
    for (DType half : {DType::kFloat16, DType::kBFloat16}) {
      std::vector<std::byte> narrow(x.size() * 2);
      k::convert(DType::kFloat32, half, {bytes(x), n}, narrow.data(), n);
      std::vector<float> wide(x.size());
      k::convert(half, DType::kFloat32, {narrow.data(), n}, bytes(wide), n);
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        const int64_t outputs = n / shape[static_cast<size_t>(axis)];
        const std::string what = fmt::format("{} over axis {} of ({})", spmd::dtype_name(half),
                                             axis, fmt::join(shape, ", "));
        for (auto op : {k::Reduce::kSum, k::Reduce::kMax, k::Reduce::kMin}) {
          std::vector<float> want(static_cast<size_t>(outputs));
          k::reduce(op, DType::kFloat32, bytes(wide), shape, axis, DType::kFloat32, bytes(want));
          std::vector<std::byte> want_half(want.size() * 2);
          k::convert(DType::kFloat32, half, {bytes(want), outputs}, want_half.data(), outputs);
          const auto same = on_teams([&] {
            std::vector<std::byte> out(want_half.size());
            k::reduce(op, half, narrow.data(), shape, axis, half, out.data());
            return out;
          });
          for (const auto& got : same) EXPECT_EQ(got, want_half) << k::name(op) << " of " << what;
          if (op != k::Reduce::kSum) continue;
          const auto widening = on_teams([&] {
            std::vector<std::byte> out(want.size() * 4);
            k::reduce(op, half, narrow.data(), shape, axis, DType::kFloat32, out.data());
            return out;
          });
          const std::vector<std::byte> want_bytes(bytes(want), bytes(want) + want.size() * 4);
          for (const auto& got : widening) EXPECT_EQ(got, want_bytes) << "float32 sum of " << what;
        }
        std::vector<int32_t> want_index(static_cast<size_t>(outputs));
        k::argmax(DType::kFloat32, bytes(wide), shape, axis, bytes(want_index));
        const auto indices = on_teams([&] {
          std::vector<std::byte> out(want_index.size() * 4);
          k::argmax(half, narrow.data(), shape, axis, out.data());
          return out;
        });
        const std::vector<std::byte> want_bytes(bytes(want_index),
                                                bytes(want_index) + want_index.size() * 4);
        for (const auto& got : indices) EXPECT_EQ(got, want_bytes) << "argmax of " << what;
      }
    }
  }
}

// argmax of bools and integers (the first maximum, a vectorised maximum and then a search along
// contiguous rows, a fold down columns otherwise) is a plain loop's first maximum, on every team:
// rows with no true element, with one late in the row, and many; few long rows and many short.
TEST(ThreadTeam, ABoolOrIntegerArgmaxIsTheFirstMaximumOnEveryTeam) {
  const std::vector<Shape> shapes = {{64, 3000}, {3, 5, 4}, {2, 40000}, {1, 300000}, {300, 2, 700}};
  std::mt19937 bits(7);
  for (const Shape& shape : shapes) {
    const int64_t n = spmd::shape_size(shape);
    for (DType dtype : {DType::kBool, DType::kInt8, DType::kUInt16, DType::kInt64}) {
      const size_t size = spmd::dtype_size(dtype);
      std::vector<std::byte> x(static_cast<size_t>(n) * size);
      for (int64_t i = 0; i < n; ++i) {  // bools true one time in 5,000; integers in [-50, 50)
        const int64_t v = dtype == DType::kBool ? (bits() % 5000 == 0) : int64_t(bits() % 100) - 50;
        std::memcpy(x.data() + i * size, &v, size);  // little-endian: the low bytes
      }
      const auto value = [&](int64_t i) {
        int64_t v = 0;
        std::memcpy(&v, x.data() + i * size, size);
        if (dtype == DType::kInt8) return int64_t(int8_t(v));
        return v;
      };
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
        for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const int64_t extent = shape[static_cast<size_t>(axis)];
        std::vector<int32_t> want(static_cast<size_t>(outer * inner));
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            int32_t best = 0;
            for (int32_t r = 1; r < extent; ++r) {
              if (value((o * extent + r) * inner + i) > value((o * extent + best) * inner + i))
                best = r;
            }
            want[static_cast<size_t>(o * inner + i)] = best;
          }
        }
        const std::vector<std::byte> want_bytes(bytes(want), bytes(want) + want.size() * 4);
        const auto got = on_teams([&] {
          std::vector<std::byte> out(want.size() * 4);
          k::argmax(dtype, x.data(), shape, axis, out.data());
          return out;
        });
        for (const auto& g : got) {
          EXPECT_EQ(g, want_bytes)
              << "argmax of " << spmd::dtype_name(dtype) << " over axis " << axis << " of ("
              << fmt::format("{}", fmt::join(shape, ", ")) << ")";
        }
      }
    }
  }
}

// reduce(kProd): along every axis of shapes that take each of reduce()'s paths (contiguous rows in
// lanes, columns folded row by row, split by slabs or by columns, half types in pieces), the
// same bytes on every team; integers (int8 and int64) wrap exactly as a plain loop's product
// modulo 2^k; floats are within n roundings of the float64 product, with a zero, an infinity and
// a NaN where placed; and an empty axis gives 1.
TEST(ThreadTeam, AProductIsTheSameOnEveryTeamIntegersWrapAndFloatsRoundOncePerFactor) {
  const std::vector<Shape> shapes = {{64, 3000},  {3, 5, 4},     {2, 40000},
                                     {1, 300000}, {300, 2, 700}, {5, 1, 33}};
  std::mt19937 bits(11);
  for (const Shape& shape : shapes) {
    const int64_t n = spmd::shape_size(shape);
    std::vector<double> x(static_cast<size_t>(n));
    // One factor in 50 within 10% of 1, the rest 1 (products of 300,000 stay far from
    // overflow); integers in [-3, 4) for the integer types.
    for (double& v : x) v = bits() % 50 == 0 ? 1.0 + (double(bits() % 2001) - 1000.0) * 1e-4 : 1.0;
    std::vector<int64_t> xi(static_cast<size_t>(n));
    for (int64_t& v : xi) v = int64_t(bits() % 7) - 3;
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kInt8, DType::kInt64}) {
      const bool integer = dtype == DType::kInt8 || dtype == DType::kInt64;
      const size_t size = spmd::dtype_size(dtype);
      std::vector<std::byte> in(static_cast<size_t>(n) * size);
      if (integer) {
        k::convert(DType::kInt64, dtype, {bytes(xi), n}, in.data(), n);
      } else {
        k::convert(DType::kFloat64, dtype, {bytes(x), n}, in.data(), n);
      }
      std::vector<double> exact(static_cast<size_t>(n));  // the values as stored
      if (!integer) k::convert(dtype, DType::kFloat64, {in.data(), n}, bytes(exact), n);
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
        for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const int64_t extent = shape[static_cast<size_t>(axis)], outputs = outer * inner;
        const auto got = on_teams([&] {
          std::vector<std::byte> out(static_cast<size_t>(outputs) * size);
          k::reduce(k::Reduce::kProd, dtype, in.data(), shape, axis, dtype, out.data());
          return out;
        });
        const std::string what = fmt::format("prod of {} over axis {} of ({})",
                                             spmd::dtype_name(dtype), axis, fmt::join(shape, ", "));
        for (const auto& g : got) EXPECT_EQ(g, got[0]) << what << ": another team's bytes";
        std::vector<double> result(static_cast<size_t>(outputs));
        if (!integer)
          k::convert(dtype, DType::kFloat64, {got[0].data(), outputs}, bytes(result), outputs);
        std::vector<int64_t> result_int(static_cast<size_t>(outputs));
        if (integer)
          k::convert(dtype, DType::kInt64, {got[0].data(), outputs}, bytes(result_int), outputs);
        const double eps = dtype == DType::kFloat32    ? 0x1p-24
                           : dtype == DType::kBFloat16 ? 0x1p-24  // in float32, rounded once
                                                       : 0x1p-53;
        const double rounded = dtype == DType::kBFloat16 ? 0x1p-8 : 0.0;
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            const auto at = [&](int64_t r) { return size_t((o * extent + r) * inner + i); };
            const size_t k = size_t(o * inner + i);
            if (integer) {
              uint64_t want = 1;
              for (int64_t r = 0; r < extent; ++r) want *= uint64_t(xi[at(r)]);
              const int64_t wrapped = dtype == DType::kInt8 ? int64_t(int8_t(want)) : int64_t(want);
              ASSERT_EQ(result_int[k], wrapped) << what << ", output " << k;
              continue;
            }
            double want = 1;
            for (int64_t r = 0; r < extent; ++r) want *= exact[at(r)];
            const double bound = (double(extent) * eps + rounded) * std::abs(want) * 1.01;
            ASSERT_LE(std::abs(result[k] - want), bound) << what << ", output " << k;
          }
        }
      }
    }
  }
  // Special values: a zero and an infinity make NaN, a NaN stays, zeros keep the sign of the
  // count of negative factors; an empty axis is 1 in every dtype.
  const std::vector<float> special = {0.0f,  INFINITY, 2.0f, 2.0f,  NAN,  3.0f,  -0.0f, 5.0f,
                                      -2.0f, 0.0f,     7.0f, -1.0f, 2.0f, -3.0f, 0.5f,  0.25f};
  std::vector<float> out(4);
  k::reduce(k::Reduce::kProd, DType::kFloat32, bytes(special), Shape{4, 4}, 1, DType::kFloat32,
            bytes(out));
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_FALSE(std::signbit(out[2]));  // -2 · 0 · 7 · -1: two negative factors, +0
  EXPECT_EQ(out[3], 2.0f * -3.0f * 0.5f * 0.25f);
  for (DType dtype : {DType::kFloat32, DType::kBFloat16, DType::kInt8, DType::kBool}) {
    std::vector<std::byte> ones(6 * spmd::dtype_size(dtype)), want(ones.size());
    k::reduce(k::Reduce::kProd, dtype, nullptr, Shape{2, 0, 3}, 1, dtype, ones.data());
    const std::vector<double> one(6, 1.0);
    k::convert(DType::kFloat64, dtype, {bytes(one), 6}, want.data(), 6);
    EXPECT_EQ(ones, want) << "empty prod of " << spmd::dtype_name(dtype);
  }
}

TEST(ThreadTeam, ChainsAreTheSameBytesOnEveryTeam) {
  const int64_t n = 300001;
  const std::vector<float> a = filled(static_cast<size_t>(n), 1.0), b = filled(1, 2.0);
  using Step = k::ChainStep;
  const Step steps[] = {
      {Step::Kind::kBinary,
       uint8_t(k::Binary::kMul),
       DType::kFloat32,
       DType::kFloat32,
       {k::chain_input(0), k::chain_input(1)}},
      {Step::Kind::kUnary,
       uint8_t(k::Unary::kTanh),
       DType::kFloat32,
       DType::kFloat32,
       {k::chain_result(0)}},
      {Step::Kind::kBinary,
       uint8_t(k::Binary::kAdd),
       DType::kFloat32,
       DType::kFloat32,
       {k::chain_result(1), k::chain_input(0)}},
  };
  const k::Input inputs[] = {{bytes(a), n}, {bytes(b), 1}};
  const auto results = on_teams([&] {
    std::vector<std::byte> out(static_cast<size_t>(n) * sizeof(float));
    k::run_chain(steps, inputs, out.data(), n);
    return out;
  });
  for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]) << "team " << t;
}

// A chain in `dtype`: `first` of input 0, then that times input 1 (the first `length` steps).
std::array<k::ChainStep, 2> first_then_product(k::Unary first, DType dtype) {
  using Step = k::ChainStep;
  return {Step{Step::Kind::kUnary, uint8_t(first), dtype, dtype, {k::chain_input(0)}},
          Step{Step::Kind::kBinary,
               uint8_t(k::Binary::kMul),
               dtype,
               dtype,
               {k::chain_result(0), k::chain_input(1)}}};
}

// n values sin(0.1 i) · 3 in `dtype`, then 0.5 (a chain's scalar input). With n > 40: a NaN,
// ±inf and a signed zero, and with `extremes` 100 and -100 too (exp overflows and underflows).
std::vector<std::byte> edge_values(DType dtype, int64_t n, bool extremes) {
  std::vector<double> wide(static_cast<size_t>(n));
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = std::sin(0.1 * double(i)) * 3;
  if (n > 40) {
    wide[3] = std::numeric_limits<double>::quiet_NaN();
    wide[size_t(n / 2)] = std::numeric_limits<double>::infinity();
    wide[size_t(n - 5)] = -std::numeric_limits<double>::infinity();
    wide[size_t(n / 3)] = -0.0;
    if (extremes) {
      wide[size_t(n / 5)] = 100;
      wide[size_t(n / 7)] = -100;
    }
  }
  wide.push_back(0.5);
  std::vector<std::byte> x(wide.size() * spmd::dtype_size(dtype));
  k::convert(DType::kFloat64, dtype, {bytes(wide), int64_t(wide.size())}, x.data(),
             int64_t(wide.size()));
  return x;
}

// An int32 chain, which the fused reductions refuse.
const k::ChainStep kIntegerNegation{k::ChainStep::Kind::kUnary,
                                    uint8_t(k::Unary::kNeg),
                                    DType::kInt32,
                                    DType::kInt32,
                                    {k::chain_input(0)}};

// What run_chain_reduce reduces for exp or tanh, alone or then a product (`chain`), over n
// elements of `dtype`: run_chain's values, but a float32 exp or tanh feeding a sum, max or min of
// 4,096 elements or more is YNNPACK's (chain.h), as XLA computes it there.
void chain_values_to_reduce(std::span<const k::ChainStep> chain, std::span<const k::Input> inputs,
                            DType dtype, int64_t n, std::byte* whole) {
  if (dtype != DType::kFloat32 || n < 4096) return k::run_chain(chain, inputs, whole, n);
  std::vector<float> e(static_cast<size_t>(n));
  k::ynn_unary(static_cast<k::Unary>(chain[0].fn), dtype, inputs[0],
               reinterpret_cast<std::byte*>(e.data()), n);
  if (chain.size() == 1) {
    std::memcpy(whole, e.data(), e.size() * sizeof(float));
    return;
  }
  k::ChainStep product = chain[1];
  product.args = {k::chain_input(0), k::chain_input(1)};
  const k::Input after[] = {{reinterpret_cast<const std::byte*>(e.data()), n}, inputs[1]};
  k::run_chain({&product, 1}, after, whole, n);
}

// run_chain_reduce: the chain then the reduction of each row, the same bytes as run_chain
// followed by reduce over the last axis (with YNNPACK's exp from 4,096 float32 elements), for
// short rows sharing a pass and long ones, on every team.
TEST(ThreadTeam, AChainReducedRowByRowIsTheChainThenTheReductionOnEveryTeam) {
  using Step = k::ChainStep;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const auto steps = first_then_product(k::Unary::kExp, dtype);
    // exp alone, summed (float32 rows in XLA's order, kernels/xla_sum.h: YNNPACK's from 4096
    // elements of input, windows of 32 below), and exp then a product.
    for (size_t length : {size_t{1}, size_t{2}})
      for (const auto& size : {std::pair<int64_t, int64_t>{1000, 7},
                               {33, 5000},
                               {3, 65536},
                               {1, 1},
                               {4, 0},
                               {9, 63},
                               {5, 64},
                               {7, 65},
                               {16, 2048},
                               {2, 4096},
                               {2, 4097},
                               {3, 130}}) {
        const int64_t rows = size.first, extent = size.second;  // lambdas capture these
        const int64_t n = rows * extent;
        const std::vector<std::byte> x = edge_values(dtype, n, true);
        const k::Input inputs[] = {{x.data(), n}, {x.data() + n * spmd::dtype_size(dtype), 1}};
        for (k::Reduce op : {k::Reduce::kSum, k::Reduce::kMax}) {
          if (extent == 0 && op == k::Reduce::kMax) continue;
          std::vector<std::byte> whole(static_cast<size_t>(n) * spmd::dtype_size(dtype));
          std::vector<std::byte> want(static_cast<size_t>(rows) * spmd::dtype_size(dtype));
          const std::span<const Step> chain(steps.data(), length);
          chain_values_to_reduce(chain, inputs, dtype, n, whole.data());
          k::reduce(op, dtype, whole.data(), Shape{rows, extent}, 1, dtype, want.data());
          const auto results = on_teams([&] {
            std::vector<std::byte> got(want.size());
            k::run_chain_reduce(chain, inputs, rows, extent, op, got.data());
            return got;
          });
          for (size_t t = 0; t < results.size(); ++t) {
            EXPECT_EQ(results[t], want)
                << spmd::dtype_name(dtype) << " " << rows << "x" << extent << " " << k::name(op)
                << ", " << length << " steps, team " << t;
          }
        }
      }
  }
  const std::vector<int32_t> v(8, 1);
  std::vector<int32_t> out(2);
  const k::Input in[] = {{bytes(v), 8}};
  EXPECT_THROW(k::run_chain_reduce({&kIntegerNegation, 1}, in, 2, 4, k::Reduce::kSum, bytes(out)),
               spmd::InvalidArgument);
}

// run_chain_reduce_axis over an axis with elements after it: the chain (YNNPACK's tanh from
// 4,096 float32 elements) then reduce() of that axis, byte for byte, for sums over fewer and more
// rows than one block (128) and than two levels of the pairwise tree, rows wider than one made
// piece (1024 columns) and than one slab (16,384), several outer slabs (split by slab) and one
// (split by rows or columns), with NaN, infinities and a signed zero, on every team.
TEST(ThreadTeam, AChainReducedOverALeadingAxisIsTheChainThenTheReductionOnEveryTeam) {
  using Step = k::ChainStep;
  struct Size {
    int64_t outer, extent, inner;
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const auto steps = first_then_product(k::Unary::kTanh, dtype);
    for (size_t length : {size_t{1}, size_t{2}})
      for (const Size& size : {Size{1, 256, 2048}, Size{1, 1, 70}, Size{1, 129, 3},
                               Size{1, 1000, 77}, Size{3, 300, 1030}, Size{5, 2, 64}, Size{1, 0, 9},
                               Size{2, 515, 2500}, Size{7, 1, 1}, Size{1, 130, 16500}}) {
        const int64_t n = size.outer * size.extent * size.inner;
        const std::vector<std::byte> x = edge_values(dtype, n, false);
        const k::Input inputs[] = {{x.data(), n}, {x.data() + n * spmd::dtype_size(dtype), 1}};
        const Shape shape{size.outer, size.extent, size.inner};
        for (k::Reduce op : {k::Reduce::kSum, k::Reduce::kMax, k::Reduce::kMin}) {
          if (size.extent == 0 && op != k::Reduce::kSum) continue;
          const std::span<const Step> chain(steps.data(), length);
          std::vector<std::byte> whole(static_cast<size_t>(n) * spmd::dtype_size(dtype));
          std::vector<std::byte> want(static_cast<size_t>(size.outer * size.inner) *
                                      spmd::dtype_size(dtype));
          chain_values_to_reduce(chain, inputs, dtype, n, whole.data());
          k::reduce(op, dtype, whole.data(), shape, 1, dtype, want.data());
          const auto results = on_teams([&] {
            std::vector<std::byte> got(want.size());
            k::run_chain_reduce_axis(chain, inputs, size.outer, size.extent, size.inner, op,
                                     got.data());
            return got;
          });
          for (size_t t = 0; t < results.size(); ++t) {
            EXPECT_EQ(results[t], want)
                << spmd::dtype_name(dtype) << " " << size.outer << "x" << size.extent << "x"
                << size.inner << " " << k::name(op) << ", " << length << " steps, team " << t;
          }
        }
      }
  }
  const std::vector<int32_t> v(8, 1);
  std::vector<int32_t> out(4);
  const k::Input in[] = {{bytes(v), 8}};
  EXPECT_THROW(
      k::run_chain_reduce_axis({&kIntegerNegation, 1}, in, 1, 2, 4, k::Reduce::kSum, bytes(out)),
      spmd::InvalidArgument);
}

// A sum of a half type widened into float32 (spmd::numpy's sum of a float16 or bfloat16 array,
// which run_chain_reduce and run_chain_reduce_axis hand to reduce() whole): the same bytes as the
// convert run over every element, then reduce() of the float32 values, for the last axis (short
// rows, rows longer than one contiguous block, many and few of them) and leading ones (one slab
// and many, wider than a made piece), with NaN, infinities and a signed zero, on every team; and
// a row broadcast read in place, which the general pass takes.
TEST(ThreadTeam, AWidenedHalfSumIsTheConvertThenTheFloat32SumOnEveryTeam) {
  using Step = k::ChainStep;
  struct Size {
    int64_t outer, extent, inner;
  };
  for (DType half : {DType::kFloat16, DType::kBFloat16}) {
    const Step widen{Step::Kind::kConvert, 0, half, DType::kFloat32, {k::chain_input(0)}};
    for (const Size& size :
         {Size{1000, 7, 1}, Size{3, 65536, 1}, Size{16, 2048, 1}, Size{2, 4097, 1}, Size{1, 1, 1},
          Size{1, 256, 2048}, Size{3, 300, 1030}, Size{2, 515, 2500}, Size{1, 130, 16500},
          Size{7, 1, 5}}) {
      const int64_t n = size.outer * size.extent * size.inner;
      const std::vector<std::byte> x = edge_values(half, n, false);
      for (bool broadcast : {false, true}) {  // the whole input, or one slab read by every one
        if (broadcast && size.outer == 1) continue;
        const int64_t elements = broadcast ? size.extent * size.inner : n;
        const k::Input inputs[] = {{x.data(), elements}};
        std::vector<std::byte> wide(static_cast<size_t>(n) * 4);
        std::vector<std::byte> want(static_cast<size_t>(size.outer * size.inner) * 4);
        k::run_chain({&widen, 1}, inputs, wide.data(), n);
        k::reduce(k::Reduce::kSum, DType::kFloat32, wide.data(),
                  Shape{size.outer, size.extent, size.inner}, 1, DType::kFloat32, want.data());
        const auto results = on_teams([&] {
          std::vector<std::byte> got(want.size());
          k::run_chain_reduce_axis({&widen, 1}, inputs, size.outer, size.extent, size.inner,
                                   k::Reduce::kSum, got.data());
          return got;
        });
        for (size_t t = 0; t < results.size(); ++t) {
          EXPECT_EQ(results[t], want)
              << spmd::dtype_name(half) << " " << size.outer << "x" << size.extent << "x"
              << size.inner << " of " << elements << " elements, team " << t;
        }
      }
    }
  }
}

// A broadcast read in place (Input's `repeat`: element i reads (i / repeat) % elements) gives
// the bytes of the broadcast made whole, in run_chain, run_chain_reduce and
// run_chain_reduce_axis, on every team: a row (repeat 1), a column, a middle dimension, runs
// shorter than a block and a scalar's, read twice in one chain.
TEST(ThreadTeam, ABroadcastReadInPlaceEqualsTheBroadcastMadeWholeOnEveryTeam) {
  using Step = k::ChainStep;
  const DType f32 = DType::kFloat32;
  const Step steps[] = {
      {Step::Kind::kUnary, uint8_t(k::Unary::kTanh), f32, f32, {k::chain_input(0)}},
      {Step::Kind::kBinary,
       uint8_t(k::Binary::kMul),
       f32,
       f32,
       {k::chain_result(0), k::chain_input(1)}},
      {Step::Kind::kBinary,
       uint8_t(k::Binary::kSub),
       f32,
       f32,
       {k::chain_result(1), k::chain_input(1)}},
  };
  struct Case {
    int64_t rows, extent, elements, repeat;  // the chain is rows × extent
  };
  for (const Case& c : {Case{300, 700, 700, 1}, Case{300, 700, 300, 700}, Case{5, 64 * 70, 64, 70},
                        Case{40, 3, 3, 1}, Case{1, 5000, 5000, 1}, Case{64, 100, 1, 6400},
                        Case{2, 40000, 40000, 1}}) {
    const int64_t n = c.rows * c.extent;
    std::vector<float> x(static_cast<size_t>(n)), b(static_cast<size_t>(c.elements));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i)) * 2;
    for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11f * float(i)) + 0.5f;
    std::vector<float> whole(x.size());  // the broadcast made whole, by its definition
    for (int64_t i = 0; i < n; ++i) whole[size_t(i)] = b[size_t(i / c.repeat % c.elements)];
    const k::Input in_place[] = {{bytes(x), n}, {bytes(b), c.elements, c.repeat}};
    const k::Input made[] = {{bytes(x), n}, {bytes(whole), n}};
    const std::string name =
        fmt::format("{}x{} reading {} each {} times", c.rows, c.extent, c.elements, c.repeat);
    std::vector<std::byte> want(x.size() * 4);
    k::run_chain(steps, made, want.data(), n);
    for (const auto& got : on_teams([&] {
           std::vector<std::byte> out(x.size() * 4);
           k::run_chain(steps, in_place, out.data(), n);
           return out;
         })) {
      EXPECT_EQ(got, want) << name;
    }
    for (const auto& [outer, extent, inner] :
         {std::tuple{c.rows, c.extent, int64_t{1}}, std::tuple{int64_t{1}, c.rows, c.extent}}) {
      std::vector<std::byte> sums(static_cast<size_t>(outer * inner) * 4);
      k::run_chain_reduce_axis(steps, made, outer, extent, inner, k::Reduce::kSum, sums.data());
      for (const auto& got : on_teams([&] {
             std::vector<std::byte> out(sums.size());
             k::run_chain_reduce_axis(steps, in_place, outer, extent, inner, k::Reduce::kSum,
                                      out.data());
             return out;
           })) {
        EXPECT_EQ(got, sums) << name << ", reduced over " << extent;
      }
    }
  }
  std::vector<float> x(8), out(8);
  const k::Input bad[][2] = {{{bytes(x), 8}, {bytes(x), 4, 0}}, {{bytes(x), 8}, {bytes(x), 9}}};
  for (const auto& inputs : bad) {
    EXPECT_THROW(k::run_chain(steps, inputs, bytes(out), 8), spmd::InvalidArgument);
  }
}

// Device threads, each with a team of two, multiplying at once: small products (one BLAS call
// each) and products large enough for the team to split, every one checked against plain loops.
TEST(ThreadTeam, DeviceThreadsMultiplyAtOnceAndEveryProductIsRight) {
  constexpr int kDevices = 4, kProducts = 1000;
  std::barrier start(kDevices);
  std::vector<int> wrong(kDevices, 0);
  auto device = [&](int d) {
    k::ThreadTeam team(2);
    const k::TeamScope scope(&team);
    start.arrive_and_wait();
    for (int p = 0; p < kProducts; ++p) {
      const bool large = p % 10 == d % 10;
      const k::MatmulShape s =
          large ? k::MatmulShape{.m = 96, .k = 64, .n = 640}
                : k::MatmulShape{.m = 6 + d, .k = 5, .n = 4 + p % 3, .transpose_b = p % 2 == 1};
      const std::vector<double> a = [&] {
        std::vector<double> v(size_t(s.m * s.k));
        for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(d * 1.3 + p * 0.7 + double(i));
        return v;
      }();
      std::vector<double> b(size_t(s.k * s.n)), c(size_t(s.m * s.n));
      for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(d * 0.9 + p * 0.3 + double(i));
      k::matmul(DType::kFloat64, s, bytes(a), bytes(b), bytes(c));
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double want = 0;
          for (int64_t q = 0; q < s.k; ++q) {
            want += a[size_t(i * s.k + q)] *
                    (s.transpose_b ? b[size_t(j * s.k + q)] : b[size_t(q * s.n + j)]);
          }
          if (std::abs(c[size_t(i * s.n + j)] - want) > 1e-9) ++wrong[static_cast<size_t>(d)];
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int d = 0; d < kDevices; ++d) threads.emplace_back(device, d);
  for (auto& t : threads) t.join();
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(wrong[static_cast<size_t>(d)], 0) << "device " << d;
}

}  // namespace
