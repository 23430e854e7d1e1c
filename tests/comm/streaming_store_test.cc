// Streaming stores (comm/streaming_store.h): the same bytes as memcpy and reduce_to, whatever the
// alignment and length.
#include "comm/streaming_store.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "comm/reduce_kernels.h"

namespace spmd {
namespace {

std::vector<std::byte> pattern(size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + size_t{seed} * 7) & 0xff);
  return v;
}

TEST(StreamingStore, ACopyEqualsMemcpyForEveryAlignmentAndLength) {
  const std::vector<std::byte> src = pattern(20000, 1);
  for (size_t dst_shift : {0, 1, 8, 17, 63}) {
    for (size_t src_shift : {0, 3, 16}) {
      for (size_t n : {0, 1, 63, 64, 65, 4096, 12345, 19000}) {
        std::vector<std::byte> want(20100, std::byte{0xee});
        std::vector<std::byte> got = want;
        std::memcpy(want.data() + dst_shift, src.data() + src_shift, n);
        stream_copy(got.data() + dst_shift, src.data() + src_shift, n);
        ASSERT_EQ(got, want) << "dst+" << dst_shift << " src+" << src_shift << " n " << n;
      }
    }
  }
}

TEST(StreamingStore, AStreamedReductionEqualsReduceTo) {
  for (DType dtype :
       {DType::kFloat32, DType::kInt32, DType::kFloat64, DType::kInt8, DType::kBFloat16}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
      const size_t elem = dtype_size(dtype);
      for (size_t count : {1, 1000, 1025, 9999}) {
        // Any bytes: both sides run the same kernel, so even NaN patterns must come out equal.
        const std::vector<std::byte> a = pattern(count * elem, 2);
        const std::vector<std::byte> b = pattern(count * elem, 3);
        std::vector<std::byte> want(count * elem + 8), got(count * elem + 8);
        reduce_to(dtype, op, want.data() + 8, a.data(), b.data(), count);
        reduce_to_streaming(dtype, op, got.data() + 8, a.data(), b.data(), count);
        ASSERT_EQ(got, want) << dtype_name(dtype) << " " << count;
      }
    }
  }
}

}  // namespace
}  // namespace spmd
