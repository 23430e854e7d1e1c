// One collective call as the process-level algorithms see it: what every participant must agree
// on (the fingerprint), the buffers of this process's local participants, and the machinery to
// move bytes (the group's layout, exchange engine and scratch memory).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "comm/engine.h"
#include "comm/fingerprint.h"
#include "comm/group_layout.h"
#include "spmd/communicator.h"

namespace spmd {

// One local participant's buffers. Sizes follow from the op and the fingerprint's count (elements
// per participant): all_reduce in/out count; all_gather in count, out count*size;
// reduce_scatter in count*size, out count; all_to_all in/out count*size; broadcast in (root
// only)/out count; permute in/out count. `in` may equal `out`.
struct LocalBuffers {
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
};

// Reusable memory of a group, grown on demand and kept across calls.
class Scratch {
 public:
  std::byte* get(size_t slot, size_t bytes) {
    if (buffers_.size() <= slot) buffers_.resize(slot + 1);
    auto& b = buffers_[slot];
    if (b.size() < bytes) b.resize(bytes);
    return reinterpret_cast<std::byte*>(b.data());
  }

 private:
  std::vector<std::vector<double>> buffers_;  // double: 8-byte aligned
};

struct Call {
  Fingerprint fp;
  // The dtype bytes move and reduce in: fp.dtype, except float16/bfloat16 reductions, which run in
  // float32 and are rounded once at the end.
  DType dtype;
  std::span<const LocalBuffers> local;         // one per local rank, in layout.local_ranks order
  std::span<const std::pair<int, int>> pairs;  // permute: (source rank, target rank)
  // all_to_all_v (one participant per process): elements to and from each rank.
  std::span<const size_t> send_counts;
  std::span<const size_t> recv_counts;
  // all_to_all_segments: per rank.
  std::span<const std::vector<ConstSegment>> send_segments;
  std::span<const std::vector<MutableSegment>> recv_segments;
  const GroupLayout& layout;
  Exchange& ex;
  Scratch& scratch;

  size_t elem() const { return dtype_size(dtype); }
  size_t bytes() const { return fp.count * elem(); }  // per participant
};

// The processes an algorithm runs among — group positions, in the order they combine — and this
// process's index among them. Every group algorithm runs among all positions; hierarchical
// all-reduce runs the others among host leaders.
struct Members {
  std::span<const int> positions;
  int me = 0;
  int size() const { return static_cast<int>(positions.size()); }
  static Members all(const GroupLayout& g) { return {g.all_positions, g.self}; }
};

// The process-level algorithms (one file each). Each runs the whole call for this process,
// local participants included, and starts with a message to or from every peer process so that a
// mismatched call fails in every participant.
void run_all_reduce(Call& c);  // picks one of the three below
void one_shot_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out);
void reduce_scatter_all_gather_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out);
// Within each host to its first process, among those leaders, back within each host.
void hierarchical_all_reduce(Call& c, const std::byte* in, std::byte* out);
// True when the group spans hosts and some host holds several of its processes.
bool spans_hosts_with_neighbours(const GroupLayout& g);
void run_all_gather(Call& c);
void run_reduce_scatter(Call& c);
void run_all_to_all(Call& c);
void run_broadcast(Call& c);
void run_permute(Call& c);
void run_barrier(Call& c);
void run_all_to_all_v(Call& c);  // with counts, or with segments when they are given

// Each local participant's input (`bytes` long), or a copy of it in scratch when some local
// output overlaps some local input.
std::vector<const std::byte*> inputs_apart(Call& c, size_t bytes);

// Message sizes below which all_reduce sends everything to everyone at once (one step, lowest
// latency) instead of reduce-scatter + all-gather (two steps, half the bytes reduced per
// process): measured on 2 processes, where the two cross near 64 KiB.
inline constexpr size_t kOneShotAllReduceMax = size_t{64} << 10;

}  // namespace spmd
