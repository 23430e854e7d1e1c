// Block: views, sharing and copy on write, reshapes, and the hand-over to HostArray.
#include "spmd/block.h"

#include <gtest/gtest.h>

#include <vector>

namespace spmd {
namespace {

TEST(Block, ViewReadsTheViewedBytesWithoutCopying) {
  std::vector<float> storage = {1, 2, 3, 4, 5, 6};
  const Block b =
      Block::view(DType::kFloat32, {2, 3}, reinterpret_cast<const std::byte*>(storage.data()));
  EXPECT_EQ(b.data<float>().data(), storage.data());
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_FALSE(b.owns_exclusively());
}

TEST(Block, WritingAViewCopiesAndLeavesTheViewedBytesAlone) {
  std::vector<float> storage = {1, 2, 3};
  Block b = Block::view(DType::kFloat32, {3}, reinterpret_cast<const std::byte*>(storage.data()));
  b.mutable_data<float>()[0] = 9;
  EXPECT_EQ(storage[0], 1);
  EXPECT_EQ(b.data<float>()[0], 9);
  EXPECT_TRUE(b.owns_exclusively());
}

TEST(Block, CopiesShareUntilOneWrites) {
  Block a = Block::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {4});
  Block b = a;
  EXPECT_EQ(a.data<int32_t>().data(), b.data<int32_t>().data());
  b.mutable_data<int32_t>()[1] = 7;
  EXPECT_EQ(a.data<int32_t>()[1], 2);
  EXPECT_EQ(b.data<int32_t>()[1], 7);
}

TEST(Block, ReshapeSharesAndInfersOneDimension) {
  const Block a = Block::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {6});
  const Block b = a.reshape({-1, 3});
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.data<int32_t>().data(), b.data<int32_t>().data());
  EXPECT_THROW(a.reshape({4, 2}), InvalidArgument);
}

// A bitcast shares the bytes under another dtype; moving it to the host copies them rather than
// hand over the owner, which is still typed as before.
TEST(Block, BitcastSharesTheBytesAsAnotherDtype) {
  Block a = Block::from_vector(std::vector<float>{1.0f, -0.0f}, {2});
  Block b = a.bitcast(DType::kUInt16, {2, 2});
  EXPECT_EQ(static_cast<const void*>(b.data<uint16_t>().data()),
            static_cast<const void*>(a.data<float>().data()));
  EXPECT_EQ(b.data<uint16_t>()[1], 0x3F80);  // 1.0f's high half, little-endian
  EXPECT_EQ(b.data<uint16_t>()[3], 0x8000);  // -0.0f's sign
  EXPECT_THROW(a.bitcast(DType::kFloat64, {2}), InvalidArgument);
  a = Block();
  const HostArray h = std::move(b).to_host();
  EXPECT_EQ(h.dtype(), DType::kUInt16);
  EXPECT_EQ(h.shape(), (Shape{2, 2}));
  EXPECT_EQ(h.data<uint16_t>()[1], 0x3F80);
}

TEST(Block, ToHostMovesTheElementsOfAnExclusiveBlock) {
  Block a = Block::from_vector(std::vector<double>{1, 2, 3, 4}, {4});
  const double* where = a.data<double>().data();
  Block b = a.reshape({2, 2});
  a = Block();  // b is now the only owner
  const HostArray h = std::move(b).to_host();
  EXPECT_EQ(h.data<double>().data(), where);
  EXPECT_EQ(h.shape(), (Shape{2, 2}));
}

TEST(Block, ToHostCopiesSharedElements) {
  const Block a = Block::from_vector(std::vector<double>{1, 2}, {2});
  const Block b = a;  // NOLINT(performance-unnecessary-copy-initialization): shares on purpose
  const HostArray h = b.to_host();
  EXPECT_NE(h.data<double>().data(), a.data<double>().data());
  EXPECT_EQ(h.data<double>()[1], 2);
}

TEST(Block, ItemNeedsOneElementAndTheRightType) {
  EXPECT_EQ(Block::scalar<int64_t>(5).item<int64_t>(), 5);
  EXPECT_THROW(Block::zeros(DType::kFloat32, {2}).item<float>(), InvalidArgument);
  EXPECT_THROW(Block::scalar(1.0f).item<double>(), InvalidArgument);
}

TEST(Block, EqualityComparesDtypeShapeAndBytes) {
  const Block a = Block::from_vector(std::vector<int32_t>{1, 2}, {2});
  EXPECT_EQ(a, a.copy());
  EXPECT_FALSE(a == a.reshape({1, 2}));
  EXPECT_FALSE(a == Block::from_vector(std::vector<int32_t>{1, 3}, {2}));
}

TEST(Block, NegativeDimensionsAreRefused) {
  EXPECT_THROW(Block::zeros(DType::kFloat32, {-1}), InvalidArgument);
  EXPECT_THROW(Block::view(DType::kFloat32, {2, -2}, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace spmd
