// Exchange, the engine under every algorithm: moves framed messages (message_header.h) between this
// process and its peers over their streams, progressing every posted send and receive together in
// one loop, so that no pattern of sends and receives can deadlock on full buffers.
//
// A call posts operations, then run()s them to completion; it may post and run again (the steps
// of a ring). Per peer, sends go out and receives complete in the order posted. Every message of
// a call carries the call's fingerprint; the first one from each peer is therefore the check
// that the peer makes the same call. Messages travel padded to 8 bytes (kMessageAlign) so that on
// both transports payloads start aligned, and sinks receive pieces that hold whole elements.
//
// Not thread-safe: one thread drives an Exchange at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/function_ref.h"
#include "comm/message_header.h"
#include "comm/peer_link.h"
#include "comm/waiter.h"
#include "spmd/error.h"

namespace spmd {

// Consumes a received payload piece: `offset` bytes into the message, `n` bytes at `data` (a
// multiple of the receive's grain; 8-byte aligned, or aligned as the payload is in the sender's
// memory when read from a mapping of it — element-aligned either way). Plain code only: a sink
// may run under catching_bus_errors() (runtime/bus_error_guard.h).
using Sink = FunctionRef<void(size_t offset, const std::byte* data, size_t n)>;

// Payloads at least this large go by reference over links that allow it: one copy (the
// receiver's, out of its mapping of the sender's shared buffer or with process_vm_readv) instead
// of two through the ring, for the price of an acknowledgement.
inline constexpr size_t kByReferenceMin = size_t{256} << 10;

// Messages (header and payload) are padded to a multiple of 8 bytes on the wire: every payload
// starts 8-byte aligned, which is what sinks and the reduce kernels need, and a message with up
// to 8 bytes of payload (a scalar all-reduce, a barrier: 56 bytes or less) fits one lane slot of a
// shared-memory stream (shm_ring.h), where it costs the reader one cache line.
inline constexpr size_t kMessageAlign = 8;
constexpr size_t padded(size_t bytes) {
  return ((sizeof(MessageHeader) + bytes + kMessageAlign - 1) & ~(kMessageAlign - 1)) -
         sizeof(MessageHeader);
}

class Exchange {
 public:
  // `peers` is indexed by position in the group; this process's own entry is unconnected.
  Exchange(std::span<PeerLink> peers, int self_position, int self_process);

  // Starts a call: every message until the next begin() carries `fingerprint`. `waiter` outlives
  // the call.
  void begin(const Fingerprint& fingerprint, Waiter* waiter);

  void send(int position, const void* data, size_t bytes);
  // Tells `positions` at once, outside the posted operations, that process `odd_process` made
  // the call `odd`, which differs from this call: they throw CollectiveMismatch naming it instead
  // of waiting for data that will not come. Best effort, bounded: a stream in the middle of a
  // message, or full for two seconds, is skipped.
  void forward_mismatch(std::span<const int> positions, const Fingerprint& odd, int odd_process);

  // The call and process behind the last CollectiveMismatch run() threw.
  struct Mismatch {
    Fingerprint call;
    int process = -1;
  };
  const Mismatch& last_mismatch() const { return last_mismatch_; }
  // Receives exactly `bytes` from `position` into `sink`, in pieces of whole `grain`-byte
  // elements.
  void recv(int position, size_t bytes, size_t grain, Sink sink);
  void recv_into(int position, void* dst, size_t bytes);

  // Comm memory (shared_buffers.h) between this process and the peer at `position`, for an
  // algorithm that touches a peer's buffers itself (mapped_all_reduce.cc) and orders those
  // touches with messages of its own: the link's Stream::maps_buffers() (both ways), share() and
  // reach_shared(). reach() throws spmd::Error naming the peer and the call.
  bool maps_buffers(int position) const;
  std::optional<ReferenceBody> share(int position, const std::byte* data, size_t bytes);
  std::byte* reach(int position, const ReferenceBody& body, size_t offset, size_t n,
                   PeerAccess access);
  // "process 2 (host node7, pid 4242)", for errors.
  const std::string& peer_name(int position) const { return peers_[position].name; }

  // Progresses everything posted until it is all done. Throws CollectiveMismatch when a peer's
  // call differs (naming both calls), spmd::Error on a malformed message or a broken link,
  // PeerFailure when the cluster aborts, DeadlineExceeded at the waiter's deadline naming the
  // peers that have not arrived at this call (or, when all arrived, those still owing data).
  // After a throw the exchange is in an unknown state: the group closes.
  void run();

 private:
  struct SendOp {
    MessageHeader header;
    const std::byte* data;
    size_t bytes;  // payload, before padding
    size_t sent;   // of header + padded payload (or reference body)
    bool by_reference;
    uint64_t ticket;  // by_reference: done once the reader has copied this many
    ReferenceBody body;
    // Small messages that need padding whole — header, payload, padding — so they go out in one
    // write (one publication); `inline_bytes` is 0 for the others, which go out as header and
    // payload in one write when they fit.
    size_t inline_bytes;
    alignas(64) std::byte inline_message[128];
  };
  struct RecvOp {
    size_t bytes;
    size_t grain;
    Sink sink;
    std::byte* dst;  // recv_into; sink unused
    MessageHeader header;
    size_t got;  // of header + padded payload (or reference body)
    bool by_reference;
    ReferenceBody body;
    size_t carry_len;
    alignas(8) std::byte carry[16];
  };
  struct PeerState {
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    size_t send_next = 0;
    size_t recv_next = 0;
    bool arrived = false;  // a message of this call came from the peer
    bool active = false;
  };

  void run_until_done();
  // What follows a send's header on the wire: its payload, or its reference body.
  static std::pair<const std::byte*, size_t> payload_of(const SendOp& op) {
    if (op.by_reference) {
      return {reinterpret_cast<const std::byte*>(&op.body), sizeof(ReferenceBody)};
    }
    return {op.data, op.bytes};
  }
  static size_t wire_bytes(const SendOp& op) {
    return sizeof(MessageHeader) + padded(op.by_reference ? sizeof(ReferenceBody) : op.bytes);
  }
  static size_t wire_bytes(const RecvOp& op) {
    return sizeof(MessageHeader) + padded(op.by_reference ? sizeof(ReferenceBody) : op.bytes);
  }
  void copy_by_reference(PeerLink& link, RecvOp& op);
  // Hands a by-reference piece, `n` bytes at `at`, to the receive's sink or copies it to its
  // destination, guarded: `at` may be a mapping of the writer's buffer, which a writer that gave
  // up on the call may free meanwhile (stream.h). Throws spmd::Error naming the writer then.
  static void take_piece(const PeerLink& link, RecvOp& op, size_t offset, const std::byte* at,
                         size_t n);
  // A receive that will come by reference is announced to the stream (Stream::expect_reference).
  void expect_reference(int position, std::byte* dst, size_t bytes);
  void flush_first_headers();
  // After a failure: every active link's stream stops what still uses the call's buffers.
  void cancel_transfers() noexcept;
  // Runs `posting` (work on the links outside run()); a link found broken there is reported as
  // run() reports it: transfers cancelled, the service's report preferred for a grace period.
  template <typename F>
  void on_link(F&& posting);
  // A message's header on the wire.
  static constexpr size_t kHeaderBytes = sizeof(MessageHeader);
  // How long a process that found a mismatch keeps trying to hand its call's header to peers
  // that have not had it (their buffers full of an earlier call) before it throws.
  static constexpr auto kMismatchFlushTimeout = std::chrono::seconds(2);
  // How long a broken link waits for the coordination service's failure report.
  static constexpr auto kBrokenLinkGrace = std::chrono::seconds(2);
  bool progress_send(PeerLink& link, SendOp& op);
  static void make_inline(SendOp& op);
  bool progress_recv(int position, PeerLink& link, RecvOp& op);
  // The steps of progress_recv(); each returns whether it moved bytes (take_whole: whether the
  // message is complete).
  bool take_whole(int position, PeerLink& link, RecvOp& op);
  bool read_header_bytes(int position, PeerLink& link, RecvOp& op);
  bool read_reference_body(PeerLink& link, RecvOp& op);
  bool skip_padding(PeerLink& link, RecvOp& op);
  bool read_payload(PeerLink& link, RecvOp& op);
  // A receive's header is in: the peer arrived at this call. Throws as run() documents when the
  // header is malformed, from another call or of another length; notes a by-reference payload.
  void accept_header(int position, RecvOp& op);
  void deliver(RecvOp& op, size_t offset, const std::byte* data, size_t n);
  // Whether the peer at `position` has not arrived at this call: a receive from it is pending and
  // its header has not come.
  bool absent(int position) const;
  // Tells the live view this call is waiting, and for which processes (activity.h).
  void show_wait();
  [[noreturn]] void timed_out();
  // Throws PeerFailure when a peer this call still waits for has called shutdown().
  void check_leaving(const CoordClient& coord);
  PeerState& state(int position);

  std::span<PeerLink> peers_;
  int self_position_;
  int self_process_;
  std::vector<PeerState> state_;
  std::vector<int> active_;  // positions with posted operations this call
  // When a peer this call waits for was first seen to have called shutdown() (check_leaving).
  std::optional<Waiter::Clock::time_point> leaving_since_;
  // The live view's token for this call's wait, once it has lasted long enough to show (0:
  // not shown).
  uint64_t shown_wait_ = 0;
  std::vector<int> fds_;
  Fingerprint fingerprint_;
  FingerprintBytes fingerprint_bytes_{};
  Waiter* waiter_ = nullptr;
  Mismatch last_mismatch_;
  std::vector<double> bounce_;  // by-reference payloads for sinks pass through here
};

template <typename F>
void Exchange::on_link(F&& posting) {
  try {
    posting();
  } catch (const Error&) {
    // As run() does: a link found broken while posting usually means a dead peer, which the
    // coordination service is about to name; prefer its report to the link's.
    cancel_transfers();
    waiter_->await_abort(kBrokenLinkGrace);
    throw;
  }
}

}  // namespace spmd
