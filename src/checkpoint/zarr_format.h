// The Zarr arrays Orbax writes (through TensorStore): a Zarr v2 .zarray or a Zarr v3 zarr.json,
// parsed into what a restore needs, and a stored chunk decoded into the chunk's bytes.
//
// Read: every dtype spmd has, little-endian, C order; chunks raw or zstd-compressed; Zarr v3's
// "bytes", "zstd", "crc32c" and "sharding_indexed" codecs (Orbax's zarr3 form: each stored object
// is a shard of inner chunks with an index), its "default" and "v2" chunk key encodings; a
// numeric fill value, or null (zero). Anything else (a filter, Fortran order, big-endian, blosc,
// gzip, a transpose) is refused with an error naming the file and the field, never misread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/chunk_io.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::checkpoint {

struct ZarrArray {
  int format = 2;  // 2 or 3
  DType dtype = DType::kFloat32;
  Shape shape;
  Shape chunks;               // the grid of stored objects (v3: shards when sharded)
  bool zstd = false;          // each (inner) chunk is a zstd frame
  char separator = '.';       // between chunk coordinates in a key
  bool c_prefix = false;      // v3's default encoding: keys are "c" + separator + coordinates
  std::vector<char> fill;     // one element's bytes, for chunks (or inner chunks) never written
  bool sharded = false;       // v3 sharding_indexed
  Shape inner_chunks;         // when sharded
  bool index_crc32c = false;  // when sharded: the index ends with its CRC-32C
  bool index_at_end = true;   // when sharded: index_location
};

// Parses a .zarray (`format` 2) or zarr.json (`format` 3). Throws spmd::Error naming `file`.
ZarrArray parse_zarr_metadata(std::string_view text, int format, const std::string& file);

// The key of the stored object at `coords`, relative to the array's directory.
std::string zarr_chunk_key(const ZarrArray& array, const std::vector<int64_t>& coords);

// The most bytes a stored object of `array` may take (a larger one is not one).
uint64_t zarr_max_stored_bytes(const ZarrArray& array);

// Decodes the stored object `stored` (nullopt: never written, all fill) into `out`, one whole
// chunk in C order (shape array.chunks). Throws spmd::Error naming `where` when it does not
// decode to exactly that.
void decode_zarr_chunk(const ZarrArray& array, const std::optional<Buffer>& stored,
                       std::span<char> out, const std::string& where);

}  // namespace spmd::checkpoint
