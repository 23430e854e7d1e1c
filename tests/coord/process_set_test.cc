// Process sets on the wire: ranges or a bitmap, and hostile encodings refused.
#include "coord/process_set.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

namespace spmd {
namespace {

std::vector<int> decoded(const wire::ProcessSet& s, int n) {
  auto r = decode_process_set(s, n);
  if (auto* err = std::get_if<std::string>(&r)) ADD_FAILURE() << *err;
  return std::get<std::vector<int>>(r);
}

std::string error_of(const wire::ProcessSet& s, int n) {
  auto r = decode_process_set(s, n);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

TEST(ProcessSet, ABlockOfConsecutiveIdsIsOneRange) {
  std::vector<int> ids;
  for (int p = 100; p < 8292; ++p) ids.push_back(p);
  const auto s = encode_process_set(ids);
  EXPECT_EQ(s.ranges_size(), 2);
  EXPECT_TRUE(s.bitmap().empty());
  EXPECT_EQ(decoded(s, 16384), ids);
}

TEST(ProcessSet, ScatteredIdsTakeABitmapOfAtMostNOverEightBytes) {
  std::vector<int> ids;
  for (int p = 0; p < 16384; p += 2) ids.push_back(p);
  const auto s = encode_process_set(ids);
  EXPECT_EQ(s.ranges_size(), 0);
  EXPECT_LE(s.bitmap().size(), 16384u / 8);
  EXPECT_EQ(decoded(s, 16384), ids);
}

RC_GTEST_PROP(ProcessSet, EverySetSurvivesTheRoundTrip, (const std::set<uint16_t>& raw)) {
  const std::vector<int> ids(raw.begin(), raw.end());
  RC_ASSERT(decoded(encode_process_set(ids), 65536) == ids);
}

TEST(ProcessSet, HostileRangesAreRefused) {
  wire::ProcessSet odd;
  odd.add_ranges(1);
  EXPECT_NE(error_of(odd, 8), "");
  wire::ProcessSet past_end;
  past_end.add_ranges(6);
  past_end.add_ranges(3);
  EXPECT_NE(error_of(past_end, 8), "");
  wire::ProcessSet huge;  // first + count overflows int32: each term is checked on its own
  huge.add_ranges(7);
  huge.add_ranges(2147483647);
  EXPECT_NE(error_of(huge, 8), "");
  wire::ProcessSet overlapping;
  for (int v : {0, 4, 2, 1}) overlapping.add_ranges(v);
  EXPECT_NE(error_of(overlapping, 8), "");
  wire::ProcessSet negative;
  negative.add_ranges(-1);
  negative.add_ranges(1);
  EXPECT_NE(error_of(negative, 8), "");
}

TEST(ProcessSet, HostileBitmapsAreRefused) {
  wire::ProcessSet too_long;
  too_long.set_bitmap(std::string(3, '\x01'));  // 8 processes need one byte
  EXPECT_NE(error_of(too_long, 8), "");
  wire::ProcessSet past_end;
  past_end.set_bitmap(std::string(1, '\x80'));  // process 7 of a cluster of 5
  EXPECT_NE(error_of(past_end, 5), "");
  wire::ProcessSet both;
  both.add_ranges(0);
  both.add_ranges(1);
  both.set_bitmap(std::string(1, '\x01'));
  EXPECT_NE(error_of(both, 8), "");
}

}  // namespace
}  // namespace spmd
