// Names that become paths, Zarr dtypes and chunk keys: what the checkpoint trusts from a file.
#include "checkpoint/names.h"

#include <gtest/gtest.h>

#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

TEST(CheckpointNames, NestedNamesSplitIntoComponents) {
  EXPECT_EQ(name_components("params/dense/w"), (std::vector<std::string>{"params", "dense", "w"}));
  EXPECT_EQ(name_components("w"), (std::vector<std::string>{"w"}));
}

TEST(CheckpointNames, NamesThatCouldLeaveTheDirectoryAreRefused) {
  for (const char* bad : {"", "/etc/passwd", "../evil", "a/../b", "a//b", "a/", ".", "..",
                          ".zarray", "a/.hidden", "back\\slash"}) {
    EXPECT_THROW(name_components(bad), InvalidArgument) << bad;
  }
  EXPECT_THROW(name_components(std::string("nul\0byte", 8)), InvalidArgument);
}

TEST(CheckpointNames, OrbaxJoinsComponentsWithDotsAndKeepsItsOwnFilesApart) {
  EXPECT_EQ(array_path("params/dense/w", Format::kSpmd),
            (std::vector<std::string>{"params", "dense", "w"}));
  EXPECT_EQ(array_path("params/dense/w", Format::kOrbax),
            (std::vector<std::string>{"params.dense.w"}));
  EXPECT_EQ(array_path("w", Format::kOrbax), (std::vector<std::string>{"w"}));
  for (const char* reserved : {"_METADATA", "_sharding", "_CHECKPOINT_METADATA",
                               "commit_success.txt", "array_metadatas"}) {
    EXPECT_THROW(array_path(reserved, Format::kOrbax), InvalidArgument) << reserved;
    EXPECT_NO_THROW(array_path(reserved, Format::kSpmd)) << reserved;
  }
  EXPECT_THROW(array_path("a/../b", Format::kOrbax), InvalidArgument);
}

TEST(CheckpointNames, ZarrDtypesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_zarr(zarr_dtype(t)), t);
  }
  EXPECT_EQ(zarr_dtype(DType::kFloat32), "<f4");
  EXPECT_EQ(zarr_dtype(DType::kBFloat16), "bfloat16");
  EXPECT_THROW(dtype_from_zarr(">f4"), InvalidArgument);
}

TEST(CheckpointNames, ChunkKeysParseOnlyInsideTheGrid) {
  EXPECT_EQ(chunk_key({2, 0, 11}), "2.0.11");
  EXPECT_EQ(chunk_key({}), "0");
  EXPECT_EQ(parse_chunk_key("2.0.11", {3, 1, 12}), (std::vector<int64_t>{2, 0, 11}));
  EXPECT_EQ(parse_chunk_key("0", {}), std::vector<int64_t>{});
  for (const char* bad :
       {"3.0.0", "1.0", "1.0.0.0", "a.0.0", "-1.0.0", "1..0", "", "../0.0", "1.0.0 "}) {
    EXPECT_THROW(parse_chunk_key(bad, {3, 1, 12}), InvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace spmd::checkpoint
