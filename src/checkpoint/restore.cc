// Restoring: each process reads the chunks its devices need under the target sharding (each
// once, checked against its checksum, in parallel) and cuts every device's box out of them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <set>

#include "array/box_copy.h"
#include "checkpoint/chunk_io.h"
#include "checkpoint/commit.h"
#include "checkpoint/metadata.h"
#include "checkpoint/names.h"
#include "checkpoint/parallel_for.h"
#include "spmd/checkpoint.h"
#include "spmd/device.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;

// Threads a process reads chunks with.
constexpr int kReadThreads = 4;

CheckpointRecord read_record(const std::string& dir) {
  if (!is_committed(dir)) {
    throw FailedPrecondition(fmt::format(
        "checkpoint: {} is not a committed checkpoint (no {} file: it does not exist, is still "
        "being written, or its save failed)",
        dir, kCommitFile));
  }
  const std::string file = (fs::path(dir) / kMetadataFile).string();
  const Buffer text = read_file(file);
  return decode_record(std::string(text.begin(), text.end()), file);
}

// The chunks (coordinates) that the box `index` overlaps.
void chunks_of(const Index& index, const ArrayRecord& a, std::set<std::vector<int64_t>>& out) {
  const size_t rank = index.size();
  if (shape_size(index_extents(index)) == 0) return;
  std::vector<int64_t> lo(rank);
  std::vector<int64_t> hi(rank);
  for (size_t d = 0; d < rank; ++d) {
    lo[d] = index[d].start / a.chunks[d];
    hi[d] = (index[d].stop - 1) / a.chunks[d];
  }
  std::vector<int64_t> at = lo;
  while (true) {
    out.insert(at);
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++at[d] <= hi[d]) break;
      at[d] = lo[d];
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

Array restore_array(const std::string& dir, const std::string& name, const ArrayRecord& a,
                    const Sharding& sharding) {
  const auto map = sharding.devices_indices_map(a.shape);  // throws for a rank that does not fit
  const int me = process_index();
  std::set<std::vector<int64_t>> needed;
  for (const auto& e : map) {
    if (e.device.process_index() == me) chunks_of(e.index, a, needed);
  }
  const std::vector<std::vector<int64_t>> chunks(needed.begin(), needed.end());
  const size_t elem = dtype_size(a.dtype);
  const size_t chunk_bytes = static_cast<size_t>(shape_size(a.chunks)) * elem;
  const std::string root = array_dir(dir, name);
  std::vector<Buffer> decoded(chunks.size());
  parallel_for(chunks.size(), kReadThreads, [&](size_t i) {
    const std::string key = chunk_key(chunks[i]);
    const auto sum = a.checksums.find(key);
    decoded[i].assign(chunk_bytes, 0);
    if (sum == a.checksums.end()) return;  // never written: Zarr's fill value
    const std::string file = (fs::path(root) / key).string();
    Buffer stored = read_file(file);
    if (checksum(stored) != sum->second) {
      throw Error(fmt::format(
          "checkpoint: chunk {} is corrupted or truncated: its checksum is {}, the metadata says "
          "{}",
          file, checksum(stored), sum->second));
    }
    if (a.compression == Compression::kNone && stored.size() == chunk_bytes) {
      decoded[i] = std::move(stored);
    } else {
      decode_chunk(stored, a.compression, decoded[i], file);
    }
  });
  std::vector<Shard> shards;
  for (const auto& e : map) {
    if (e.device.process_index() != me) continue;
    const Shape extent = index_extents(e.index);
    HostArray out = HostArray::uninitialized(a.dtype, extent);
    std::set<std::vector<int64_t>> mine;
    chunks_of(e.index, a, mine);
    for (const auto& c : mine) {
      const size_t at =
          static_cast<size_t>(std::lower_bound(chunks.begin(), chunks.end(), c) - chunks.begin());
      std::vector<int64_t> src_start(c.size());
      std::vector<int64_t> dst_start(c.size());
      std::vector<int64_t> box(c.size());
      for (size_t d = 0; d < c.size(); ++d) {
        const int64_t origin = c[d] * a.chunks[d];
        const int64_t lo = std::max(origin, e.index[d].start);
        const int64_t hi = std::min(origin + a.chunks[d], e.index[d].stop);
        src_start[d] = lo - origin;
        dst_start[d] = lo - e.index[d].start;
        box[d] = hi - lo;
      }
      copy_box(reinterpret_cast<const std::byte*>(decoded[at].data()), a.chunks, src_start,
               out.mutable_bytes().data(), extent, dst_start, box, elem);
    }
    shards.push_back(Shard{e.device, e.index, e.replica_id, std::move(out)});
  }
  return Array(a.shape, a.dtype, sharding.clone(), std::move(shards), me);
}

}  // namespace

bool is_committed(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kCommitFile, ec);
}

Metadata read_metadata(const std::string& dir) { return read_record(dir).metadata; }

std::map<std::string, ArrayInfo> read_array_info(const std::string& dir) {
  std::map<std::string, ArrayInfo> out;
  for (const auto& [name, a] : read_record(dir).arrays) out[name] = ArrayInfo{a.dtype, a.shape};
  return out;
}

Tree restore(const std::string& dir, const ShardingTree& targets) {
  const CheckpointRecord record = read_record(dir);
  Tree out;
  for (const auto& [name, sharding] : targets) {
    const auto it = record.arrays.find(name);
    if (it == record.arrays.end()) {
      std::vector<std::string> names;
      for (const auto& [n, a] : record.arrays) names.push_back(n);
      throw InvalidArgument(fmt::format("checkpoint: {} has no array \"{}\"; it holds \"{}\"", dir,
                                        name, fmt::join(names, "\", \"")));
    }
    if (!sharding) throw InvalidArgument(fmt::format("checkpoint: no sharding for \"{}\"", name));
    out.emplace(name, restore_array(dir, name, it->second, *sharding));
  }
  return out;
}

Tree restore(const std::string& dir, const Sharding& sharding) {
  ShardingTree targets;
  for (const auto& [name, info] : read_array_info(dir)) targets[name] = sharding.clone();
  return restore(dir, targets);
}

}  // namespace spmd::checkpoint
