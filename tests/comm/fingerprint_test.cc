#include "comm/fingerprint.h"

#include <gtest/gtest.h>

namespace spmd {
namespace {

Fingerprint all_reduce(uint64_t seq, uint64_t count) {
  Fingerprint f;
  f.sequence = seq;
  f.group = 42;
  f.op = CollectiveOp::kAllReduce;
  f.dtype = DType::kFloat32;
  f.reduce = ReduceOp::kSum;
  f.count = count;
  return f;
}

TEST(Fingerprint, RoundTripsThroughItsWireForm) {
  Fingerprint f = all_reduce(7, 1024);
  f.root = -1;
  EXPECT_EQ(decode(encode(f)), f);
  Fingerprint b;
  b.op = CollectiveOp::kBroadcast;
  b.root = 3;
  b.dtype = DType::kBFloat16;
  b.count = uint64_t{1} << 40;
  b.sequence = ~uint64_t{0};
  EXPECT_EQ(decode(encode(b)), b);
  Fingerprint then = all_reduce(8, 64);
  then.then = true;
  EXPECT_EQ(decode(encode(then)), then);
  EXPECT_NE(encode(then), encode(all_reduce(8, 64)));
}

TEST(Fingerprint, OutOfRangeWireFieldsAreRejected) {
  const FingerprintBytes good = encode(all_reduce(1, 1));
  for (size_t at : {28, 29, 30, 31}) {
    FingerprintBytes bad = good;
    bad[at] = 0xff;
    EXPECT_FALSE(decode(bad).has_value()) << "byte " << at;
  }
  FingerprintBytes unknown_flag = good;
  unknown_flag[31] = 2;  // bit 0 is the epilogue's; the others are reserved
  EXPECT_FALSE(decode(unknown_flag).has_value());
}

TEST(Fingerprint, DescriptionsNameTheCall) {
  EXPECT_EQ(all_reduce(7, 1024).describe(), "all_reduce #7 (sum, float32 x 1024)");
  Fingerprint b;
  b.op = CollectiveOp::kBroadcast;
  b.root = 0;
  b.dtype = DType::kInt32;
  b.count = 16;
  b.sequence = 3;
  EXPECT_EQ(b.describe(), "broadcast #3 (root 0, int32 x 16)");
}

TEST(Fingerprint, MismatchMessagesNameBothCallsAndWhatDiffers) {
  const std::string msg = mismatch_message(all_reduce(5, 1024), 0, all_reduce(5, 1000), 2);
  EXPECT_NE(msg.find("process 0 called all_reduce #5 (sum, float32 x 1024)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("process 2 called all_reduce #5 (sum, float32 x 1000)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(different element count)"), std::string::npos) << msg;
  Fingerprint gather = all_reduce(5, 1024);
  gather.op = CollectiveOp::kAllGather;
  gather.dtype = DType::kInt8;
  const std::string two = mismatch_message(all_reduce(5, 1024), 1, gather, 0);
  EXPECT_NE(two.find("different operation, dtype"), std::string::npos) << two;
  Fingerprint then = all_reduce(5, 1024);
  then.then = true;
  EXPECT_EQ(then.describe(), "all_reduce #5 (sum then an epilogue, float32 x 1024)");
  const std::string three = mismatch_message(then, 0, all_reduce(5, 1024), 1);
  EXPECT_NE(three.find("(different epilogue)"), std::string::npos) << three;
}

}  // namespace
}  // namespace spmd
