#include "spmd/host_array.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <thread>
#include <vector>

namespace spmd {
namespace {

HostArray iota(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return HostArray::from_vector(v, std::move(shape));
}

TEST(HostArray, TypedViewsCheckTheDtype) {
  auto a = HostArray::from_vector(std::vector<float>{1, 2, 3}, {3});
  EXPECT_EQ(a.data<float>()[2], 3.0f);
  EXPECT_EQ(a.nbytes(), 12u);
  EXPECT_THROW(a.data<int32_t>(), InvalidArgument);
  EXPECT_THROW(HostArray::from_vector(std::vector<float>{1, 2}, {3}), InvalidArgument);
  EXPECT_THROW(HostArray::zeros(DType::kInt8, {2, -1}), InvalidArgument);
}

TEST(HostArray, SliceCopiesABox) {
  auto a = iota({3, 4});
  auto box = a.slice({{1, 3}, {1, 3}});
  EXPECT_EQ(box.shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<int32_t>(box.data<int32_t>().begin(), box.data<int32_t>().end()),
            (std::vector<int32_t>{5, 6, 9, 10}));
  EXPECT_THROW(a.slice({{0, 4}, {0, 1}}), InvalidArgument);
  EXPECT_EQ(a.slice({{0, 0}, {0, 4}}).size(), 0);
  auto cube = iota({2, 3, 4});
  EXPECT_EQ(cube.slice({{1, 2}, {2, 3}, {1, 3}}).data<int32_t>()[1], 1 * 12 + 2 * 4 + 2);
}

TEST(HostArray, AssignWritesABoxBack) {
  auto a = HostArray::zeros(DType::kInt32, {3, 4});
  a.assign({{1, 3}, {2, 4}}, iota({2, 2}));
  EXPECT_EQ(a.data<int32_t>()[1 * 4 + 2], 0);
  EXPECT_EQ(a.data<int32_t>()[2 * 4 + 3], 3);
  EXPECT_THROW(a.assign({{0, 1}, {0, 1}}, iota({2, 2})), InvalidArgument);
  auto whole = iota({3, 4});
  HostArray copy = HostArray::zeros(DType::kInt32, {3, 4});
  for (int r = 0; r < 3; ++r) copy.assign({{r, r + 1}, {0, 4}}, whole.slice({{r, r + 1}, {0, 4}}));
  EXPECT_EQ(copy, whole);
}

// borrow(): the bytes are viewed where they are, kept alive by the owner; copies and whole-row
// slices view them too; any other slice, and a write, copy them first, so the lender's memory is
// never written.
TEST(HostArray, ABorrowedArrayViewsItsLendersBytesAndNeverWritesThem) {
  auto lent = std::make_shared<std::vector<int32_t>>(12);
  std::iota(lent->begin(), lent->end(), 0);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(lent->data()), 48);
  const std::byte* at = bytes.data();
  HostArray a = HostArray::borrow(DType::kInt32, {3, 4}, bytes, lent);
  std::weak_ptr<std::vector<int32_t>> alive = lent;
  lent.reset();  // the array keeps it
  ASSERT_FALSE(alive.expired());
  EXPECT_TRUE(a.borrowed());
  EXPECT_EQ(a.bytes().data(), at);
  EXPECT_EQ(a, iota({3, 4}));

  const HostArray copy = a;  // NOLINT(performance-unnecessary-copy-initialization): the point
  EXPECT_EQ(copy.bytes().data(), at);
  const HostArray rows = a.slice({{1, 3}, {0, 4}});
  EXPECT_TRUE(rows.borrowed());
  EXPECT_EQ(rows.bytes().data(), at + 16);
  EXPECT_EQ(rows, iota({3, 4}).slice({{1, 3}, {0, 4}}));
  const HostArray box = a.slice({{1, 3}, {1, 3}});
  EXPECT_FALSE(box.borrowed());
  EXPECT_EQ(box, iota({3, 4}).slice({{1, 3}, {1, 3}}));

  a.mutable_data<int32_t>()[0] = 99;  // copies first
  EXPECT_FALSE(a.borrowed());
  EXPECT_NE(a.bytes().data(), at);
  EXPECT_EQ(copy.data<int32_t>()[0], 0);
  EXPECT_EQ(reinterpret_cast<const int32_t*>(at)[0], 0);
  EXPECT_FALSE(alive.expired());  // copy and rows still view it
  EXPECT_THROW(HostArray::borrow(DType::kInt32, {5}, bytes, nullptr), InvalidArgument);
}

// A source that counts its fetches, writes an iota of int32, and fails the first `failures`.
class CountingSource final : public DeferredSource {
 public:
  explicit CountingSource(int failures = 0) : failures_(failures) {}
  void fetch(std::span<std::byte> out) const override {
    ++fetches;
    if (failures_-- > 0) throw ResourceExhausted("the device is busy");
    std::vector<int32_t> v(out.size() / sizeof(int32_t));
    std::iota(v.begin(), v.end(), 0);
    std::memcpy(out.data(), v.data(), out.size());
  }
  mutable std::atomic<int> fetches = 0;

 private:
  mutable std::atomic<int> failures_;
};

TEST(HostArray, ADeferredArrayFetchesItsBytesOnTheFirstReadOnly) {
  auto source = std::make_shared<CountingSource>();
  HostArray a = HostArray::deferred(DType::kInt32, {3, 4}, source);
  EXPECT_EQ(a.deferred_source(), source.get());
  EXPECT_EQ(a.nbytes(), 48u);  // shape, dtype and size need no read
  EXPECT_EQ(a.shape(), (Shape{3, 4}));
  EXPECT_EQ(source->fetches, 0);
  const HostArray copy = a;  // copies share the bytes, fetched or not
  EXPECT_EQ(a, iota({3, 4}));
  EXPECT_EQ(copy.data<int32_t>()[11], 11);
  EXPECT_EQ(a.slice({{1, 3}, {0, 4}}), iota({3, 4}).slice({{1, 3}, {0, 4}}));  // a view of rows
  EXPECT_EQ(a.slice({{0, 3}, {1, 2}}), iota({3, 4}).slice({{0, 3}, {1, 2}}));  // a copied box
  EXPECT_EQ(source->fetches, 1);
  a.mutable_data<int32_t>()[0] = 99;  // the array's own bytes now: the copy keeps the fetched
  EXPECT_EQ(a.deferred_source(), nullptr);
  EXPECT_EQ(copy.data<int32_t>()[0], 0);
  EXPECT_EQ(source->fetches, 1);
  EXPECT_THROW(HostArray::deferred(DType::kInt32, {-1}, source), InvalidArgument);
  // Empty: nothing to fetch, equal to an empty array of its own.
  const HostArray empty = HostArray::deferred(DType::kInt32, {0, 4}, source);
  EXPECT_EQ(empty.nbytes(), 0u);
  EXPECT_EQ(empty, HostArray::zeros(DType::kInt32, {0, 4}));
  EXPECT_EQ(empty.slice({{0, 0}, {0, 4}}).shape(), (Shape{0, 4}));
}

TEST(HostArray, AFailedFetchIsThatReadsErrorAndTheNextReadTriesAgain) {
  auto source = std::make_shared<CountingSource>(1);
  const HostArray a = HostArray::deferred(DType::kInt32, {5}, source);
  EXPECT_THROW((void)a.bytes(), ResourceExhausted);
  EXPECT_EQ(a.data<int32_t>()[4], 4);
  EXPECT_EQ(source->fetches, 2);
}

TEST(HostArray, ConcurrentFirstReadsOfADeferredArrayFetchOnce) {
  auto source = std::make_shared<CountingSource>();
  const HostArray a = HostArray::deferred(DType::kInt32, {1 << 16}, source);
  std::vector<std::thread> readers;
  std::atomic<int64_t> total = 0;
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] { total += a.data<int32_t>()[(1 << 16) - 1]; });
  }
  for (std::thread& r : readers) r.join();
  EXPECT_EQ(total, 8 * ((1 << 16) - 1));
  EXPECT_EQ(source->fetches, 1);
}

TEST(HostArray, PrintsLikeNumpy) {
  EXPECT_EQ(iota({2, 2}).to_string(), "int32[2, 2] [0, 1, 2, 3]");
  EXPECT_EQ(HostArray::from_vector(std::vector<bfloat16>{to_bfloat16(1.5f)}, {1}).to_string(),
            "bfloat16[1] [1.5]");
}

// A freed large buffer is reused for the next one of its size: touching it again takes no page
// faults, even after malloc has given its free memory back to the kernel (malloc_trim), which is
// what made a training step fault its buffers in again every other step.
TEST(HostArray, AFreedLargeBufferIsReusedWithoutFreshPageFaults) {
  auto faults = [] {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
  };
  const int64_t n = int64_t{1} << 20;
  {
    HostArray a = HostArray::uninitialized(DType::kUInt8, {n});
    std::memset(a.mutable_bytes().data(), 1, a.nbytes());
  }
  malloc_trim(0);
  const long before = faults();
  HostArray b = HostArray::uninitialized(DType::kUInt8, {n});
  std::memset(b.mutable_bytes().data(), 2, b.nbytes());
  EXPECT_LT(faults() - before, 16) << "page faults touching a reused 1 MiB buffer";
}

TEST(HostArray, AShapeOrByteCountBeyondInt64IsRefusedBeforeAnyAllocation) {
  // 2^62 x 4 wrapped to 0 elements once: an array of 0 bytes that later kernels overran.
  constexpr int64_t kHuge = int64_t{1} << 62;
  EXPECT_THROW(shape_size({kHuge, 4}), InvalidArgument);
  EXPECT_THROW(shape_size({int64_t{1} << 32, int64_t{1} << 32}), InvalidArgument);
  EXPECT_EQ(shape_size({kHuge, 1}), kHuge);
  EXPECT_EQ(shape_size({kHuge, 4, 0}), 0) << "empty, however large the other dimensions";
  try {
    HostArray::uninitialized(DType::kFloat32, {kHuge, 4});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("(4611686018427387904, 4)"), std::string::npos)
        << e.what();
  }
  // Elements within int64, bytes beyond it.
  try {
    HostArray::uninitialized(DType::kFloat32, {kHuge});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("float32[4611686018427387904]"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spmd
