// Restoring: each process reads the chunks its devices need under the target sharding (each
// once, checked against its checksum, in parallel) and cuts every device's box out of them.
// Nothing read is trusted: files are opened as regular files beneath the checkpoint only
// (safe_open.h), the metadata is validated (metadata.h) and checked against each array's .zarray,
// and every allocation is sized from validated numbers and fails as an error naming what it was
// for.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <map>
#include <set>

#include "array/box_copy.h"
#include "checkpoint/chunk_io.h"
#include "checkpoint/commit.h"
#include "checkpoint/metadata.h"
#include "checkpoint/names.h"
#include "checkpoint/parallel_for.h"
#include "spmd/checkpoint.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

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
  const RegularFile file = RegularFile::open_beneath(dir, {kMetadataFile});
  const Buffer text = read_file(file, kMaxMetadataBytes);
  return decode_record(std::string(text.begin(), text.end()), file.path());
}

// The file `leaf` of array `name` (its .zarray, or a chunk key) beneath `dir`.
RegularFile open_array_file(const std::string& dir, const std::string& name,
                            const std::string& leaf) {
  std::vector<std::string> parts = name_components(name);
  parts.push_back(leaf);
  return RegularFile::open_beneath(dir, parts);
}

// `what` allocated by `make`, or an error naming it instead of a bare std::bad_alloc.
template <class Make>
auto allocated(const std::string& what, size_t bytes, Make&& make) {
  try {
    return make();
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format("checkpoint: cannot allocate the {} bytes of {}", bytes, what));
  }
}

// This host's memory in bytes: no restore may need more on one process.
uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
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

// Reads chunk `key` of array `name` (checked against its checksum) into `out`, a whole chunk's
// bytes. A compressed chunk is read only up to the largest zstd frame of out.size() bytes.
void read_chunk(const std::string& dir, const std::string& name, const std::string& key,
                const ArrayRecord& a, std::span<char> out) {
  const auto sum = a.checksums.find(key);
  const RegularFile chunk = open_array_file(dir, name, key);
  const std::string& file = chunk.path();
  if (sum == a.checksums.end()) {  // decode_record checked that every chunk is listed
    throw Error(fmt::format("checkpoint: {} lists no checksum for chunk {}", kMetadataFile, file));
  }
  auto verify = [&](const std::string& got) {
    if (got != sum->second) {
      throw Error(fmt::format(
          "checkpoint: chunk {} is corrupted or truncated: its checksum is {}, the metadata says "
          "{}",
          file, got, sum->second));
    }
  };
  if (a.compression == Compression::kNone) {
    verify(read_file_into(chunk, out));
    return;
  }
  const Buffer stored = read_file(chunk, ZSTD_compressBound(out.size()));
  verify(checksum(stored));
  decode_chunk(stored, a.compression, out, file);
}

// Refuses `a` when its .zarray disagrees with the metadata (a reader of either would see another
// array).
void check_array_files(const std::string& dir, const std::string& name, const ArrayRecord& a) {
  const RegularFile zarray = open_array_file(dir, name, ".zarray");
  const Buffer text = read_file(zarray, kMaxZarrayBytes);
  check_zarray(std::string(text.begin(), text.end()), a, zarray.path());
}

// The bytes this process's devices hold of `a` under `map`; refused before anything is allocated
// when it does not fit in this host's memory.
size_t local_bytes(const std::string& dir, const std::string& name, const ArrayRecord& a,
                   const std::vector<DeviceIndex>& map, int me) {
  uint64_t total = 0;
  for (const auto& e : map) {
    if (e.device.process_index() == me) {
      total += static_cast<uint64_t>(shape_size(index_extents(e.index))) * dtype_size(a.dtype);
    }
  }
  if (total > physical_memory()) {
    throw Error(fmt::format(
        "checkpoint: restoring \"{}\" of {} needs {} bytes on this process, more than this "
        "host's memory; restore it onto a sharding that splits it further",
        name, dir, total));
  }
  return static_cast<size_t>(total);
}

Array restore_array(const std::string& dir, const std::string& name, const ArrayRecord& a,
                    const Sharding& sharding) {
  const auto map = sharding.devices_indices_map(a.shape);  // throws for a rank that does not fit
  const int me = process_index();
  const size_t elem = dtype_size(a.dtype);
  // decode_record checked that the chunk's bytes fit in int64 and lie within the array.
  const size_t chunk_bytes = static_cast<size_t>(shape_size(a.chunks)) * elem;
  check_array_files(dir, name, a);
  const std::string what = fmt::format("array \"{}\" of {}", name, dir);
  const size_t output_bytes = local_bytes(dir, name, a, map, me);

  // This process's devices, their buffers, and which of them need each chunk.
  std::vector<const DeviceIndex*> mine;
  std::vector<HostArray> outs;
  std::map<std::vector<int64_t>, std::vector<size_t>> users;
  for (const auto& e : map) {
    if (e.device.process_index() != me) continue;
    std::set<std::vector<int64_t>> chunks;
    chunks_of(e.index, a, chunks);
    for (const auto& c : chunks) users[c].push_back(mine.size());
    mine.push_back(&e);
    outs.push_back(allocated(what, output_bytes, [&] {
      return HostArray::uninitialized(a.dtype, index_extents(e.index));
    }));
  }
  const std::vector<std::pair<std::vector<int64_t>, std::vector<size_t>>> work(users.begin(),
                                                                               users.end());
  parallel_for(work.size(), kReadThreads, [&](size_t w) {
    const auto& [coords, devices] = work[w];
    const std::string key = chunk_key(coords);
    // A chunk that is exactly one device's whole box goes straight into that device's buffer.
    if (devices.size() == 1) {
      const auto& index = mine[devices[0]]->index;
      bool whole = index_extents(index) == a.chunks;
      for (size_t d = 0; d < coords.size(); ++d) {
        whole = whole && index[d].start == coords[d] * a.chunks[d];
      }
      if (whole) {
        const auto bytes = outs[devices[0]].mutable_bytes();
        read_chunk(dir, name, key, a, {reinterpret_cast<char*>(bytes.data()), bytes.size()});
        return;
      }
    }
    Buffer chunk = allocated(fmt::format("a chunk {} of {}", key, what), chunk_bytes,
                             [&] { return Buffer(chunk_bytes); });
    read_chunk(dir, name, key, a, chunk);
    for (size_t k : devices) {
      const Index& index = mine[k]->index;
      std::vector<int64_t> src_start(coords.size());
      std::vector<int64_t> dst_start(coords.size());
      std::vector<int64_t> box(coords.size());
      for (size_t d = 0; d < coords.size(); ++d) {
        const int64_t origin = coords[d] * a.chunks[d];
        const int64_t lo = std::max(origin, index[d].start);
        const int64_t hi = std::min(origin + a.chunks[d], index[d].stop);
        src_start[d] = lo - origin;
        dst_start[d] = lo - index[d].start;
        box[d] = hi - lo;
      }
      copy_box(reinterpret_cast<const std::byte*>(chunk.data()), a.chunks, src_start,
               outs[k].mutable_bytes().data(), index_extents(index), dst_start, box, elem);
    }
  });
  std::vector<Shard> shards;
  shards.reserve(mine.size());
  for (size_t k = 0; k < mine.size(); ++k) {
    shards.push_back(
        Shard{mine[k]->device, mine[k]->index, mine[k]->replica_id, std::move(outs[k])});
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
