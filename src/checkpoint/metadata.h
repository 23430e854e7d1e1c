// spmd_checkpoint.json: the tree, each array's dtype, shape, chunk shape, compressor, saving
// sharding (for information) and chunk checksums, and the user's metadata. Decoding trusts
// nothing: every field is type-checked and every name and chunk key validated.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "spmd/checkpoint.h"

namespace spmd::checkpoint {

inline constexpr const char* kMetadataFile = "spmd_checkpoint.json";
inline constexpr const char* kCommitFile = "COMMIT";

// The most bytes restore reads of spmd_checkpoint.json (about 60 bytes per chunk: 4 million
// chunks) and of a .zarray (a few hundred bytes). Larger files are not a checkpoint spmd wrote.
inline constexpr uint64_t kMaxMetadataBytes = uint64_t{256} << 20;
inline constexpr uint64_t kMaxZarrayBytes = uint64_t{1} << 20;

struct ArrayRecord {
  DType dtype = DType::kFloat32;
  Shape shape;
  Shape chunks;  // the chunk (shard) shape; every entry >= 1
  Compression compression = Compression::kZstd;
  std::string sharding;                          // how it was saved, for information
  std::map<std::string, std::string> checksums;  // chunk key -> checksum(), every chunk written
  // Format::kOrbax: the sharding as Orbax serializes it into _sharding (not kept in the record).
  std::string orbax_sharding;
};

struct CheckpointRecord {
  Format format = Format::kSpmd;         // "layout" in the JSON ("orbax"; absent for kSpmd)
  std::set<std::string> sequence_nodes;  // SaveOptions::sequence_nodes (not kept in the JSON)
  std::map<std::string, ArrayRecord> arrays;
  Metadata metadata;
};

std::string encode_record(const CheckpointRecord& record);

// Throws spmd::Error naming `file` and the offending field.
CheckpointRecord decode_record(const std::string& text, const std::string& file);

// The number of chunks along each dimension.
std::vector<int64_t> chunk_grid(const ArrayRecord& array);

// The .zarray of `array` (Zarr v2).
std::string zarray_json(const ArrayRecord& array);
// Throws spmd::Error naming `file` when the .zarray `text` disagrees with `array` (shape, chunks,
// dtype, compressor, order) or is not one.
void check_zarray(const std::string& text, const ArrayRecord& array, const std::string& file);

// Its .zattrs: the dtype by spmd's name and the sharding it was saved from, for readers.
std::string zattrs_json(const ArrayRecord& array);

}  // namespace spmd::checkpoint
