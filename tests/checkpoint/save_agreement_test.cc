// Process 0's decision over the processes' proposals (save_agreement.h), as pure functions: one
// "no" fails everyone with its kind, differing trees name the process and the leaf, and the
// writes must cover every chunk exactly once.
#include "checkpoint/save_agreement.h"

#include <gtest/gtest.h>

#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

// Process p of `n` proposing w: float32 [8, 6] in rows of 2, writing rows 2p and 2p+1 of 4.
SaveProposal rows(int p) {
  SaveProposal s;
  s.path = "/ck/7";
  s.step = 7;
  ArrayRecord w;
  w.shape = {8, 6};
  w.chunks = {2, 6};
  w.sharding = "NamedSharding(x)";
  s.arrays["w"] = w;
  s.writes["w"] = {std::to_string(2 * p) + ".0", std::to_string(2 * p + 1) + ".0"};
  return s;
}

std::vector<SaveProposal> both() { return {rows(0), rows(1)}; }

TEST(SaveAgreement, AgreeingProposalsThatCoverEveryChunkGo) { EXPECT_TRUE(decide(both()).ok()); }

TEST(SaveAgreement, OneNoFailsEveryoneWithItsKindAndNamesTheProcess) {
  auto p = both();
  p[1].vote = {StatusCode::kInvalidArgument, "the array name \"../x\" is not allowed"};
  const Verdict v = decide(p);
  EXPECT_EQ(v.kind, StatusCode::kInvalidArgument);
  EXPECT_EQ(v.error, "process 1: the array name \"../x\" is not allowed");
  EXPECT_THROW(raise(v), InvalidArgument);
}

TEST(SaveAgreement, AMissingArrayIsNamedWithItsProcess) {
  auto p = both();
  p[1].arrays.erase("w");
  p[1].writes.erase("w");
  EXPECT_EQ(decide(p).error, "process 1 has no array \"w\", which process 0 saves");
  p = both();
  p[1].arrays["extra"] = p[1].arrays["w"];
  EXPECT_EQ(decide(p).error, "process 1 saves an array \"extra\" that process 0 lacks");
}

TEST(SaveAgreement, AnotherFormatIsNamedAndTravelsOnTheWire) {
  auto p = both();
  p[1].format = Format::kOrbax;
  EXPECT_EQ(decide(p).error, "process 1 saves in Orbax's format, process 0 in spmd's");
  const SaveProposal back = decode_proposal(encode_proposal(p[1]), 1);
  EXPECT_TRUE(back.vote.ok()) << back.vote.error;
  EXPECT_EQ(back.format, Format::kOrbax);
  EXPECT_EQ(decode_proposal(encode_proposal(p[0]), 0).format, Format::kSpmd);
}

TEST(SaveAgreement, AnotherShapeDtypeOrShardingIsNamed) {
  auto p = both();
  p[1].arrays["w"].shape = {8, 7};
  EXPECT_NE(decide(p).error.find("process 1 saves \"w\" as float32[8, 7]"), std::string::npos)
      << decide(p).error;
  p = both();
  p[1].arrays["w"].sharding = "NamedSharding(y)";
  EXPECT_NE(decide(p).error.find("NamedSharding(y)"), std::string::npos);
  p = both();
  p[1].step = 8;
  EXPECT_EQ(decide(p).error, "process 1 saves /ck/7 as step 8, process 0 as step 7");
}

TEST(SaveAgreement, UncoveredChunksAreListed) {
  auto p = both();
  p[1].writes["w"] = {"2.0"};
  const std::string e = decide(p).error;
  EXPECT_NE(e.find("no process writes chunk 3.0 of \"w\" (3 of its 4 chunks"), std::string::npos)
      << e;
}

TEST(SaveAgreement, AChunkWrittenTwiceOrOutsideTheGridIsRefused) {
  auto p = both();
  p[1].writes["w"] = {"1.0", "2.0", "3.0"};
  EXPECT_NE(decide(p).error.find("processes 0 and 1 both write chunk 1.0"), std::string::npos);
  p = both();
  p[1].writes["w"].push_back("9.0");
  EXPECT_NE(decide(p).error.find("outside the grid"), std::string::npos);
}

TEST(SaveAgreement, ZeroSizeArraysNeedNoChunks) {
  auto p = both();
  for (auto& s : p) {
    s.arrays["w"].shape = {0, 6};
    s.writes["w"].clear();
  }
  EXPECT_TRUE(decide(p).ok());
}

TEST(SaveAgreement, ProposalsRoundTripAndGarbageIsANoVote) {
  SaveProposal s = rows(1);
  s.vote = {StatusCode::kAlreadyExists, "x"};
  const SaveProposal back = decode_proposal(encode_proposal(s), 1);
  EXPECT_EQ(back.vote.kind, StatusCode::kAlreadyExists);
  EXPECT_EQ(back.writes, s.writes);
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.arrays.at("w").chunks, s.arrays.at("w").chunks);
  const SaveProposal junk = decode_proposal("{\"kind\": 3}", 2);
  EXPECT_FALSE(junk.vote.ok());
  EXPECT_NE(junk.vote.error.find("process 2"), std::string::npos);
  SaveProposal latin = rows(0);
  latin.path = "/ck/caf\xe9";  // encodes (replaced), never throws
  EXPECT_FALSE(encode_proposal(latin).empty());
  EXPECT_FALSE(decode_go("not json").verdict.ok());
}

}  // namespace
}  // namespace spmd::checkpoint
