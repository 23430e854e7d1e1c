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

TEST(StreamingStore, EveryOutputGetsTheInputsCombinedInOrder) {
  // The reference: a copy of the first input, then each other input reduced into it in turn.
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kUInt8, DType::kFloat16}) {
    const size_t elem = dtype_size(dtype);
    for (size_t inputs : {2, 3, 5}) {
      for (size_t out_shift : {size_t{0}, elem, 16 * elem}) {
        for (size_t count : {1, 255, 256, 257, 3000}) {
          std::vector<std::vector<std::byte>> in;
          for (size_t q = 0; q < inputs; ++q) in.push_back(pattern(count * elem, 10 + q));
          std::vector<std::byte> want = in[0];
          for (size_t q = 1; q < inputs; ++q) {
            reduce_into(dtype, ReduceOp::kSum, want.data(), in[q].data(), count);
          }
          std::vector<const std::byte*> ins;
          for (const auto& v : in) ins.push_back(v.data());
          std::vector<std::vector<std::byte>> out(
              3, std::vector<std::byte>(count * elem + 2 * out_shift));
          std::vector<std::byte*> outs;
          for (size_t j = 0; j < out.size(); ++j) outs.push_back(out[j].data() + out_shift * j);
          reduce_to_all_streaming(dtype, ReduceOp::kSum, ins, outs, count);
          for (size_t j = 0; j < out.size(); ++j) {
            const std::vector<std::byte> got(outs[j], outs[j] + count * elem);
            ASSERT_EQ(got, want) << dtype_name(dtype) << " inputs " << inputs << " output " << j
                                 << " shifted " << out_shift * j << " count " << count;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace spmd
