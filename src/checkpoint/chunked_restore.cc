#include "checkpoint/chunked_restore.h"

#include <fmt/format.h>
#include <unistd.h>

#include <map>
#include <set>

#include "array/box_copy.h"
#include "checkpoint/chunk_io.h"
#include "checkpoint/parallel_for.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd::checkpoint {
namespace {

// Threads a process reads chunks with.
constexpr int kReadThreads = 4;

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
void chunks_of(const Index& index, const Shape& chunks, std::set<std::vector<int64_t>>& out) {
  const size_t rank = index.size();
  if (shape_size(index_extents(index)) == 0) return;
  std::vector<int64_t> lo(rank);
  std::vector<int64_t> hi(rank);
  for (size_t d = 0; d < rank; ++d) {
    lo[d] = index[d].start / chunks[d];
    hi[d] = (index[d].stop - 1) / chunks[d];
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

// The bytes this process's devices hold of `a` under `map`; refused before anything is allocated
// when it does not fit in this host's memory.
size_t local_bytes(const std::string& what, const ChunkedArray& a,
                   const std::vector<DeviceIndex>& map, int me) {
  uint64_t total = 0;
  for (const auto& e : map) {
    if (e.device.process_index() == me) {
      total += static_cast<uint64_t>(shape_size(index_extents(e.index))) * dtype_size(a.dtype);
    }
  }
  if (total > physical_memory()) {
    throw Error(fmt::format(
        "checkpoint: restoring {} needs {} bytes on this process, more than this host's memory; "
        "restore it onto a sharding that splits it further",
        what, total));
  }
  return static_cast<size_t>(total);
}

// Whether chunk `coords` is exactly the box `index`: it can then be read straight into it.
bool is_whole(const std::vector<int64_t>& coords, const Index& index, const Shape& chunks) {
  bool whole = index_extents(index) == chunks;
  for (size_t d = 0; d < coords.size(); ++d) {
    whole = whole && index[d].start == coords[d] * chunks[d];
  }
  return whole;
}

// Copies the part of the chunk at `coords` that lies in the box `index` into `out`.
void cut(const ChunkedArray& a, const std::vector<int64_t>& coords, std::span<const char> chunk,
         const Index& index, HostArray& out) {
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
           out.mutable_bytes().data(), index_extents(index), dst_start, box, dtype_size(a.dtype));
}

}  // namespace

Array restore_chunked(const ChunkedArray& a, const Sharding& sharding, const std::string& what,
                      const ChunkReader& read) {
  const auto map = sharding.devices_indices_map(a.shape);  // throws for a rank that does not fit
  const int me = process_index();
  const size_t chunk_bytes = static_cast<size_t>(shape_size(a.chunks)) * dtype_size(a.dtype);
  const size_t output_bytes = local_bytes(what, a, map, me);

  // This process's devices, their buffers, and which of them need each chunk.
  std::vector<const DeviceIndex*> mine;
  std::vector<HostArray> outs;
  std::map<std::vector<int64_t>, std::vector<size_t>> users;
  for (const auto& e : map) {
    if (e.device.process_index() != me) continue;
    std::set<std::vector<int64_t>> chunks;
    chunks_of(e.index, a.chunks, chunks);
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
    if (devices.size() == 1 && is_whole(coords, mine[devices[0]]->index, a.chunks)) {
      const auto bytes = outs[devices[0]].mutable_bytes();
      read(coords, {reinterpret_cast<char*>(bytes.data()), bytes.size()});
      return;
    }
    Buffer chunk = allocated(fmt::format("a chunk of {}", what), chunk_bytes,
                             [&] { return Buffer(chunk_bytes); });
    read(coords, chunk);
    for (size_t k : devices) cut(a, coords, chunk, mine[k]->index, outs[k]);
  });
  std::vector<Shard> shards;
  shards.reserve(mine.size());
  for (size_t k = 0; k < mine.size(); ++k) {
    shards.push_back(
        Shard{mine[k]->device, mine[k]->index, mine[k]->replica_id, std::move(outs[k])});
  }
  return Array(a.shape, a.dtype, sharding.clone(), std::move(shards), me);
}

}  // namespace spmd::checkpoint
