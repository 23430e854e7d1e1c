// One collective call as the process-level algorithms see it: what every participant must agree
// on (the fingerprint), the buffers of this process's local participants, and the machinery to
// move bytes (the group's layout, exchange engine and scratch memory).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "comm/exchange.h"
#include "comm/fingerprint.h"
#include "comm/group_layout.h"
#include "comm/local_assist.h"
#include "spmd/communicator.h"

namespace spmd {

// One local participant's buffers. Sizes follow from the op and the fingerprint's count (elements
// per participant): all_reduce in/out count; all_gather in count, out count*size;
// reduce_scatter in count*size, out count; all_to_all in/out count*size; broadcast in (root
// only)/out count; permute in/out count. `in` may equal `out`.
struct LocalBuffers {
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
  // all_reduce_then: the participant's epilogue (every participant of the call has one, the
  // fingerprint says so); null otherwise.
  const AllReduceEpilogue* then = nullptr;
};

// Reusable memory of a group, grown on demand and kept across calls.
// The scratch buffers one call may hold at the same time, one per role. Roles that are live
// together must differ: an algorithm that runs another inside it (all_reduce widens into
// kWidened/kWidenedResult, then runs one-shot or ring among processes; hierarchical all-reduce
// keeps kHostFollowers/kHostSum while one-shot runs among the leaders) uses other roles than
// the one it runs.
enum class ScratchRole : size_t {
  kAlgorithm,           // the innermost algorithm's own buffer: peers' data (one-shot, ring),
                        // all_gather's assembled result, unaliased_inputs' copy
  kWidened,             // float16/bfloat16 inputs widened to float32 and combined locally
  kWidenedResult,       // all_reduce: the float32 result before rounding; reduce_scatter: results
  kReduceScatterPeers,  // reduce_scatter: every peer's blocks
  kHostFollowers,       // hierarchical all-reduce: the host's other processes' data
  kHostSum,             // hierarchical all-reduce: the host's sum
  kCount
};

// Buffers kept across calls, grown as needed, 8-byte aligned.
class Scratch {
 public:
  std::byte* get(ScratchRole role, size_t bytes) {
    auto& b = buffers_[static_cast<size_t>(role)];
    if (b.size() < bytes) b.resize(bytes);
    return reinterpret_cast<std::byte*>(b.data());
  }

 private:
  std::array<std::vector<double>, static_cast<size_t>(ScratchRole::kCount)> buffers_;  // aligned
};

struct Call {
  Fingerprint fp;
  // The dtype bytes move and reduce in (wire_dtype): fp.dtype, except float16/bfloat16
  // reductions, which run in float32 and are rounded once at the end. Fixed for the call.
  const DType dtype;
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
  // The local participants waiting for this call, to share its in-memory work with
  // (local_assist.h); null where the process has one.
  LocalAssist* assist = nullptr;

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

// Block b of P over elements [begin, begin + count), balanced (the first count % P blocks one
// longer): [first, last).
inline std::pair<size_t, size_t> balanced_block(size_t begin, size_t count, int P, int b) {
  const size_t base = count / P;
  const size_t extra = count % P;
  const size_t first = begin + b * base + std::min<size_t>(b, extra);
  return {first, first + base + (static_cast<size_t>(b) < extra ? 1 : 0)};
}

// The process-level algorithms (one file each). Each runs the whole call for this process,
// local participants included, and starts with a message to or from every peer process so that a
// mismatched call fails in every participant.
void run_all_reduce(Call& c);  // picks one of the three below
void one_shot_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out);
// Those two, and the mapped one below, apply `then` (when not null) to this process's share of
// the result before they hand it on, so that `out` ends with the epilogue's values everywhere.
void reduce_scatter_all_gather_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out,
                                          const AllReduceEpilogue* then = nullptr);
// Straight through every process's comm memory, where all of them map each other's buffers
// (maps_every_peer); false, having exchanged only offers, when some process's buffers are not
// all comm memory, for the caller to run another algorithm.
bool mapped_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out,
                       const AllReduceEpilogue* then = nullptr);
// Whether this process reaches the comm memory of every other member and they reach its own: the
// same answer in every member (group_setup.cc agrees on it per host).
bool maps_every_peer(const Call& c, Members m);
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
// output overlaps some local input (in-place all_to_all and permute, whose local copies or
// receives would otherwise clobber an input another participant still has to send).
std::vector<const std::byte*> unaliased_inputs(Call& c, size_t bytes);

// The epilogue of an all_reduce_then call (the first local participant's), or null.
inline const AllReduceEpilogue* epilogue_of(const Call& c) {
  return c.local.empty() ? nullptr : c.local[0].then;
}

// `then` over elements [first, first + count) held at `values`, in place: a tile at a time
// through a buffer of this thread's, so that no call's input and output overlap.
void apply_in_place(const AllReduceEpilogue& then, std::byte* values, size_t first, size_t count,
                    size_t elem);

// The bytes of a tile an epilogue runs on: the sum and the epilogue's values stay in the L2
// cache, and each call of the epilogue (a chain of kernels, looked up per call) covers enough
// elements to pay for itself.
inline constexpr size_t kEpilogueTile = size_t{128} << 10;

// Two tiles of kEpilogueTile bytes of the calling thread's, one after the other, 8-byte aligned,
// kept for the thread's life: the sum and the epilogue's values.
std::byte* epilogue_tiles();

// Runs the call with its op's algorithm (the one dispatch of every collective).
void run_call(Call& c);

// The dtype a call's bytes move and reduce in: float32 for reductions of float16/bfloat16
// (rounded once at the end), fp.dtype otherwise.
DType wire_dtype(const Fingerprint& fp);

// Message sizes below which all_reduce sends everything to everyone at once (one step, lowest
// latency) instead of reduce-scatter + all-gather (two steps, half the bytes reduced per
// process): measured on 2 processes, where the two cross near 64 KiB.
inline constexpr size_t kOneShotAllReduceMax = size_t{64} << 10;

}  // namespace spmd
