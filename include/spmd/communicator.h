// spmd::Communicator — collectives across the devices of a cluster (seed 001's "collective
// operations across multiple processes' worth of accelerators").
//
// A communicator is a group of participants — global devices, numbered by rank — that run
// collectives together. spmd::world() has one participant per process (its first local device),
// in process order; make_communicators() builds a group from any list of global device ids;
// split() partitions a communicator by colour. Creation is collective: every process owning a
// device of the new group must make the same call.
//
// Every participant calls each collective with the same op, dtype, element count, reduce op and
// root, in the same order. A difference throws CollectiveMismatch in every participant, naming
// both calls, instead of hanging or computing garbage. Sizes are per participant: `in` and `out`
// are checked against them and a wrong size throws InvalidArgument before anything is sent.
// `in` and `out` may be the same buffer (in place). float16 and bfloat16 reduce in float32 and
// round to nearest even once.
//
// No call waits forever: when the coordination service reports a dead process every waiting
// call throws PeerFailure (or the process exits, see distributed.h); a call (or a communicator's
// creation) waiting for a process that has called shutdown() — it left its program without
// making the call — throws PeerFailure naming it about a second later; and
// the collective timeout (distributed::Options::collective_timeout or SPMD_COLLECTIVE_TIMEOUT;
// 10 minutes by default) bounds each call, throwing DeadlineExceeded naming the participants
// that did not arrive. After a failed call (other than InvalidArgument) the
// communicator is closed; later calls throw FailedPrecondition.
//
// Transports: shared memory between processes of one host; between hosts UCX when the build has it
// and UCX finds a fabric other than TCP (InfiniBand, RoCE), else spmd's TCP. SPMD_TRANSPORT=tcp
// (or Options::transport) forces spmd's TCP everywhere, SPMD_TRANSPORT=ucx UCX everywhere, with
// UCX's own variables (UCX_TLS, UCX_NET_DEVICES) choosing its paths. Processes with different
// SPMD_HOST_IDs count as separate hosts. The algorithms, the mismatch check, deadlines and failure
// reports are the same over every transport.
//
// Thread safety: a handle belongs to one participant. When a process owns several participants,
// each calls from its own thread, concurrently; they combine in memory before anything crosses
// processes. Point-to-point send/recv are matched in program order with the collectives of the
// same pair of processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/reduce_op.h"

namespace spmd {

class ProcessGroup;  // src/comm/

// One contiguous piece of a message (all_to_all_segments).
struct ConstSegment {
  const void* data;
  size_t bytes;
};
struct MutableSegment {
  void* data;
  size_t bytes;
};

// What all_reduce_then() does to the reduced values on their way to the outputs: reads `n`
// values at `reduced`, elements [first, first + n) of the reduction, and writes the final values
// of those elements at `out`, which does not overlap `reduced`; both hold the call's dtype. It
// must be an element-wise function that computes the same value for an element in every
// participant (it may read other buffers at the same elements, when those hold the same values
// in every participant): the engine calls one participant's epilogue for each range and hands the
// result to all. It may be called from several threads at once, on disjoint ranges, and must not
// call a collective.
using AllReduceEpilogue =
    std::function<void(const std::byte* reduced, std::byte* out, size_t first, size_t n)>;

class Communicator {
 public:
  // This participant's rank, 0 … size()-1.
  int rank() const;
  // The number of participants.
  int size() const;
  // The global id of this participant's device.
  int device_id() const;
  // Every participant's device id, by rank.
  const std::vector<int>& device_ids() const;
  // The group's id: equal on every participant, different for every group made.
  uint64_t id() const;
  // How this process reaches the others: "local", or the transports it uses joined by "+"
  // ("shm", "tcp", "ucx", "shm+tcp", "shm+ucx", …).
  std::string transport() const;

  // out = op over every participant's `in`, element-wise. in.size() == out.size().
  template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  void all_reduce(const In& in, Out&& out, ReduceOp op = ReduceOp::kSum) {
    using T = value_of<In, Out>;
    all_reduce(dtype_of<T>(), std::ranges::data(in), std::ranges::data(out),
               sized(in, out, Sizes::kEqual), op);
  }
  template <std::ranges::contiguous_range Buf>
  void all_reduce(Buf&& inout, ReduceOp op = ReduceOp::kSum) {
    all_reduce(inout, inout, op);
  }

  // out = every participant's `in`, concatenated in rank order. out.size() == in.size()*size().
  template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  void all_gather(const In& in, Out&& out) {
    using T = value_of<In, Out>;
    all_gather(dtype_of<T>(), std::ranges::data(in), std::ranges::data(out),
               sized(in, out, Sizes::kOutIsInTimesSize));
  }

  // out = block rank() of op over every participant's `in`. in.size() == out.size()*size().
  template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  void reduce_scatter(const In& in, Out&& out, ReduceOp op = ReduceOp::kSum) {
    using T = value_of<In, Out>;
    reduce_scatter(dtype_of<T>(), std::ranges::data(in), std::ranges::data(out),
                   sized(in, out, Sizes::kInIsOutTimesSize), op);
  }

  // Block j of `in` goes to participant j; block i of `out` comes from participant i. Both
  // hold size() blocks of equal length.
  template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  void all_to_all(const In& in, Out&& out) {
    using T = value_of<In, Out>;
    all_to_all(dtype_of<T>(), std::ranges::data(in), std::ranges::data(out),
               sized(in, out, Sizes::kEqualMultipleOfSize));
  }

  // Every participant's buffer becomes `root`'s.
  template <std::ranges::contiguous_range Buf>
  void broadcast(Buf&& buf, int root) {
    using T = std::remove_cvref_t<std::ranges::range_value_t<Buf>>;
    broadcast(dtype_of<T>(), std::ranges::data(buf), std::ranges::data(buf), std::ranges::size(buf),
              root);
  }

  // For each (source, target) rank pair, target's `out` = source's `in`; participants that are
  // no target get zeros. Each rank is a source at most once and a target at most once; every
  // participant passes the same pairs.
  template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  void permute(const In& in, Out&& out, std::span<const std::pair<int, int>> pairs) {
    using T = value_of<In, Out>;
    permute(dtype_of<T>(), std::ranges::data(in), std::ranges::data(out),
            sized(in, out, Sizes::kEqual), pairs);
  }

  // Point to point, with rank `peer` of this communicator. Blocks until the data is handed over
  // (send) or has arrived (recv).
  template <std::ranges::contiguous_range Buf>
  void send(const Buf& data, int peer) {
    using T = std::remove_cvref_t<std::ranges::range_value_t<Buf>>;
    send(dtype_of<T>(), std::ranges::data(data), std::ranges::size(data), peer);
  }
  template <std::ranges::contiguous_range Buf>
  void recv(Buf&& data, int peer) {
    using T = std::remove_cvref_t<std::ranges::range_value_t<Buf>>;
    recv(dtype_of<T>(), std::ranges::data(data), std::ranges::size(data), peer);
  }

  // Returns when every participant has called barrier().
  void barrier();

  // The dtype-tagged forms the layers above use; `count` is elements per participant (per block
  // for all_to_all; of `in` for all_gather, of `out` for reduce_scatter).
  void all_reduce(DType dtype, const void* in, void* out, size_t count, ReduceOp op);
  // all_reduce, then `then` applied to the result in the same pass (jit's psum followed by an
  // element-wise chain, such as a gradient's SGD update): each range of the result is reduced,
  // passed through `then` while it is in cache and written to every output, so a process's
  // participants compute the epilogue once between them and each process only on its share of
  // the elements, where a separate pass would read and write the whole result again in every
  // participant. Every participant must pass an epilogue (one without is a different call:
  // CollectiveMismatch). float16 and bfloat16 results get it after their rounding.
  void all_reduce_then(DType dtype, const void* in, void* out, size_t count, ReduceOp op,
                       const AllReduceEpilogue& then);
  void all_gather(DType dtype, const void* in, void* out, size_t count);
  void reduce_scatter(DType dtype, const void* in, void* out, size_t count, ReduceOp op);
  void all_to_all(DType dtype, const void* in, void* out, size_t count);
  // `in` is read on the root only.
  void broadcast(DType dtype, const void* in, void* out, size_t count, int root);
  void permute(DType dtype, const void* in, void* out, size_t count,
               std::span<const std::pair<int, int>> pairs);
  void send(DType dtype, const void* data, size_t count, int peer);
  void recv(DType dtype, void* data, size_t count, int peer);

  // Variable all_to_all, for the layers above (resharding): send_counts[j] elements of `in`,
  // packed in rank order, go to rank j; recv_counts[i] elements from rank i land in `out`, packed
  // in rank order. Each pair's counts must agree, else every participant of the pair throws
  // CollectiveMismatch. Needs one participant per process; `in` and `out` must not overlap.
  void all_to_all_v(DType dtype, const void* in, std::span<const size_t> send_counts, void* out,
                    std::span<const size_t> recv_counts);

  // all_to_all_v with messages made of pieces, so the layers above can send from and receive
  // into strided memory without packing: the message to rank j is sends[j] in order, the one
  // from rank i lands in recvs[i] in order. The pieces of each pair must match one to one in
  // size (else CollectiveMismatch); a rank's own pieces are copied. One participant per process.
  void all_to_all_segments(std::span<const std::vector<ConstSegment>> sends,
                           std::span<const std::vector<MutableSegment>> recvs);

  // Partitions this communicator: participants passing the same `color` (≥ 0) form a new
  // communicator, ranked by `key`, ties by current rank. Collective over this communicator.
  Communicator split(int color, int key) const;

  // Closes the group for this process's participants: calls waiting in it here and every later
  // call throw FailedPrecondition quoting `why`. For a caller that gives up on a group (shard_map
  // when a device's function throws): the other processes are not told, and see this process
  // stop taking part (their calls time out or fail when it exits).
  void close(const std::string& why);

  Communicator(std::shared_ptr<ProcessGroup> group, int local);  // see make_communicators()

 private:
  template <class In, class Out>
  using value_of = std::remove_cvref_t<std::ranges::range_value_t<In>>;

  // How an op's input and output element counts must relate (size: the participants).
  enum class Sizes {
    kEqual,                // all_reduce, permute: the count is either
    kOutIsInTimesSize,     // all_gather: the count is in's
    kInIsOutTimesSize,     // reduce_scatter: the count is out's
    kEqualMultipleOfSize,  // all_to_all: the count is one block, in / size
  };

  // Checks `relation` and returns the per-participant count; InvalidArgument naming the op's
  // rule otherwise.
  template <class In, class Out>
  size_t sized(const In& in, const Out& out, Sizes relation) const {
    static_assert(std::is_same_v<std::remove_cvref_t<std::ranges::range_value_t<In>>,
                                 std::remove_cvref_t<std::ranges::range_value_t<Out>>>,
                  "in and out must hold the same element type");
    return check_sizes(std::ranges::size(in), std::ranges::size(out), relation);
  }
  size_t check_sizes(size_t in, size_t out, Sizes relation) const;

  std::shared_ptr<ProcessGroup> group_;
  int local_ = 0;
};

// The communicator of all processes, one participant (the first local device) each. The same
// group for the whole session; available before initialize() as a group of one.
Communicator world();

// The communicator of `processes` (process indices, ascending), one participant — the first
// local device — each. Made once per session for each set: the first call is collective among
// those processes, later ones return the same group.
Communicator process_communicator(std::span<const int> processes);

// Creates a communicator of `device_ids` (rank order). Collective among the processes owning
// those devices; returns one handle per device this process owns, in rank order. Throws
// InvalidArgument for an unknown or repeated id, FailedPrecondition when this process owns none.
std::vector<Communicator> make_communicators(std::span<const int> device_ids);

}  // namespace spmd
