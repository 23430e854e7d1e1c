// The ucx transport's stream (ucx_transport.h): one UCP endpoint to one peer, both directions.
//
// Every write is one tagged UCP message whose tag names the sender's position and the message's
// number on this stream (kUcxStreamTagBit set); the reader probes for the next number and
// receives it, whatever its length, into the stream's inbox — so bytes come out in order, and
// matching is the worker's (by tag), never an endpoint's queue. (UCP's own stream API lost the
// first message of a pair of endpoints both ends had just created, now and then, over shared
// memory in UCX 1.13, when one end closed soon after.) Small writes are copied into buffers the
// stream owns, at most kUcxWindowBytes in flight; a write of kUcxDirectMin bytes or more is sent
// from the caller's buffer (by rendezvous when UCX chooses it) and taken — write_some() returns
// its length — once UCX is done with it.
//
// By-reference payloads go as tagged messages from the caller's buffer and land straight in the
// receiver's destination: the receiver posts the receive when the exchange posts its receive
// (expect_reference), so the transfer runs while the frames before it are still being read.
// Across hosts UCX sends them by rendezvous, with the pool buffer's registration when it has one;
// within a host, pipelined through shared memory (UcxReach, ucx_transport.h).
//
// A failure UCX reports on the endpoint — the peer's death across hosts, a reset — turns every
// later call into an spmd::Error naming the peer (the exchange then prefers the coordination
// service's report of the same death). Driven under the group's lock, like every stream.
#pragma once

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "comm/stream.h"

namespace spmd {

// Bytes of stream sends in flight per endpoint before write_some() takes no more.
inline constexpr size_t kUcxWindowBytes = size_t{4} << 20;
// Writes at least this large go from the caller's buffer, without a copy.
inline constexpr size_t kUcxDirectMin = size_t{32} << 10;
// Set in the tags of stream messages; clear in those of by-reference payloads.
inline constexpr uint64_t kUcxStreamTagBit = uint64_t{1} << 63;

class UcxStream final : public Stream {
 public:
  // On `worker`, which outlives the stream (`keep_alive` holds it). `self_position` and
  // `peer_position` name the two ends in tags. `failure` is where UCX's error callback writes:
  // owned by the worker, so that a callback for an endpoint whose close did not finish in time
  // never writes into a stream that is gone.
  UcxStream(std::shared_ptr<void> keep_alive, ucp_worker_h worker, std::string peer,
            uint32_t self_position, uint32_t peer_position, ucs_status_t* failure);
  ~UcxStream() override;
  UcxStream(const UcxStream&) = delete;
  UcxStream& operator=(const UcxStream&) = delete;

  // Creates the endpoint to `address`; `across_hosts`: UCX reports the peer's failure (peer
  // error handling) and transfers pass the pool buffers' registrations.
  void connect(const ucp_address_t* address, bool across_hosts);

  size_t write_some(std::span<const std::byte> first, std::span<const std::byte> second) override;
  std::span<const std::byte> readable() override;
  void consume(size_t n) override;
  // Always: the receive is posted into the destination before the payload comes, so UCX puts it
  // there directly — by rendezvous across hosts, through its pipelined FIFO within one. (A
  // payload for a sink lands whole in a buffer of the stream's: sent in pieces, for the sink to
  // reduce each while in cache, it measured no faster.)
  bool by_reference() const override { return true; }
  std::optional<ReferenceBody> offer_reference(const std::byte* data, size_t bytes,
                                               uint64_t ticket) override;
  uint64_t references_done() override;
  // Posts the tagged receive at once, into `dst` or a buffer of the stream's.
  void expect_reference(std::byte* dst, size_t bytes) override;
  const std::byte* fetch_reference(const ReferenceBody& body, size_t offset, std::byte* dst,
                                   size_t n, Waiter& waiter) override;
  void cancel() noexcept override;
  const char* transport() const override { return "ucx"; }

 private:
  struct Send {
    std::vector<std::byte> bytes;
    void* request;  // null: done when posted
  };
  struct Offer {
    uint64_t ticket;
    void* request;  // null: done when posted
  };
  // A by-reference payload expected (its receive posted), in ticket order.
  struct Expected {
    uint64_t tag = 0;
    size_t bytes = 0;
    std::byte* into = nullptr;   // the caller's destination, or own.data()
    std::vector<std::byte> own;  // for a sink
    void* request = nullptr;     // null: done when posted
    ucp_tag_recv_info_t info{};  // filled when it completes
  };

  static void on_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  void check() const;
  [[noreturn]] void broken(const char* what, ucs_status_t status) const;
  void reap_sends();
  uint64_t next_send_tag();
  // The message just received into the inbox: counted, and handed out whole.
  std::span<const std::byte> take_inbox();
  // write_some() of kUcxDirectMin bytes or more at `data`: posts it, or reports it done.
  size_t write_direct(std::span<const std::byte> data);
  // Posts the tagged receive of `e`.
  void post_receive(Expected& e);
  // Waits for `request` through `waiter`, progressing the worker.
  void await(void* request, size_t bytes, Waiter& waiter);
  // Waits (progressing, at most `limit`) for `request` to finish; true when it did.
  bool settle(void* request, std::chrono::milliseconds limit);
  void close_endpoint(bool force) noexcept;

  std::shared_ptr<void> keep_alive_;
  ucp_worker_h worker_;
  ucp_ep_h ep_ = nullptr;
  std::string peer_;
  uint32_t self_position_;
  uint32_t peer_position_;
  ucs_status_t& failure_;    // set by on_error
  bool closed_ = false;      // cancel() force-closed the endpoint
  bool registered_ = false;  // transfers pass pool buffers' registrations (across hosts)
  std::deque<Send> sends_;   // posted stream sends, in order
  // A write posted from the caller's buffer, not yet done: its data, length and request.
  const std::byte* direct_data_ = nullptr;
  size_t direct_bytes_ = 0;
  void* direct_request_ = nullptr;
  size_t sends_bytes_ = 0;
  std::vector<std::vector<std::byte>> spare_;  // send buffers to reuse
  uint64_t sent_messages_ = 0;                 // stream messages sent
  uint64_t received_ = 0;                      // stream messages received whole
  std::vector<std::byte> inbox_;               // the message being read
  size_t inbox_bytes_ = 0;
  size_t inbox_read_ = 0;
  void* inbox_request_ = nullptr;  // the receive of the next message, while it is in progress
  size_t inbox_length_ = 0;        // that message's length
  std::deque<Offer> offers_;       // by-reference sends not yet seen done, in ticket order
  uint64_t references_done_ = 0;
  std::deque<Expected> expected_;  // posted receives (a deque: `info` must not move)
  uint64_t expected_tickets_ = 0;
  std::vector<std::byte> handed_out_;  // the last sink payload's buffer, returned on the next call
  std::vector<std::vector<std::byte>> spare_receives_;
  // Buffers of receives UCX would not let go of (cancel()): kept until the stream goes.
  std::vector<std::vector<std::byte>> leaked_;
};

// The tag of by-reference payload `ticket` from the process at group position `sender`.
constexpr uint64_t ucx_reference_tag(uint32_t sender, uint64_t ticket) {
  return (uint64_t{sender} << 40) | (ticket & ((uint64_t{1} << 40) - 1));
}
// The tag of stream message `number` from the process at group position `sender`.
constexpr uint64_t ucx_stream_tag(uint32_t sender, uint64_t number) {
  return kUcxStreamTagBit | ucx_reference_tag(sender, number);
}

}  // namespace spmd
