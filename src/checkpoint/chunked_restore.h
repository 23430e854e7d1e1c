// Restoring one chunked array onto a sharding, whatever format holds it (spmd's own, or Orbax's
// Zarr in OCDBT or in directories): this process finds the chunks its devices need under the
// target sharding, reads each once (in parallel threads), and cuts every device's box out of
// them. Allocations are sized from the validated shape and refused, naming the array, when they
// exceed this host's memory.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "spmd/array.h"
#include "spmd/sharding.h"

namespace spmd::checkpoint {

struct ChunkedArray {
  DType dtype = DType::kFloat32;
  Shape shape;
  Shape chunks;  // every entry >= 1; edge chunks may reach past the shape (Zarr stores them whole)
};

// Fills `chunk` (the whole chunk at `coords`: shape `chunks`, C order) or throws spmd::Error
// naming the file. Called from several threads at once.
using ChunkReader = std::function<void(const std::vector<int64_t>& coords, std::span<char> chunk)>;

// The array `array` laid out on `sharding`, holding this process's shards. `what` names it in
// errors ("array \"w\" of /ckpt/7"). Throws InvalidArgument for a sharding whose rank does not fit.
Array restore_chunked(const ChunkedArray& array, const Sharding& sharding, const std::string& what,
                      const ChunkReader& read);

}  // namespace spmd::checkpoint
