#include "comm/exchange.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "comm/peers_now.h"
#include "comm/streaming_store.h"
#include "coord/coord_client.h"
#include "runtime/bus_error_guard.h"
#include "spmd/error.h"

namespace spmd {
namespace {

constexpr size_t kHeaderBytes = sizeof(MessageHeader);
alignas(64) constexpr std::byte kZeros[kMessageAlign] = {};
// How long a process that found a mismatch keeps trying to hand its call's header to peers that
// have not had it (their buffers full of an earlier call) before it throws.
constexpr auto kMismatchFlushTimeout = std::chrono::seconds(2);
// How long a broken link waits for the coordination service's failure report.
constexpr auto kBrokenLinkGrace = std::chrono::seconds(2);

}  // namespace

Exchange::Exchange(std::span<PeerLink> peers, int self_position, int self_process)
    : peers_(peers),
      self_position_(self_position),
      self_process_(self_process),
      state_(peers.size()) {}

void Exchange::begin(const Fingerprint& fingerprint, Waiter* waiter) {
  for (int p : active_) {
    PeerState& s = state_[p];
    s.sends.clear();
    s.recvs.clear();
    s.send_next = s.recv_next = 0;
    s.arrived = false;
    s.active = false;
  }
  active_.clear();
  fds_.clear();
  fingerprint_ = fingerprint;
  fingerprint_bytes_ = encode(fingerprint);
  waiter_ = waiter;
}

Exchange::PeerState& Exchange::state(int position) {
  PeerState& s = state_[position];
  if (!s.active) {
    s.active = true;
    active_.push_back(position);
    const int fd = peers_[position].in->poll_fd();
    if (fd >= 0) fds_.push_back(fd);
  }
  return s;
}

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

void Exchange::send(int position, const void* data, size_t bytes) {
  PeerState& s = state(position);
  SendOp& op = s.sends.emplace_back();
  op.header.fingerprint = fingerprint_bytes_;
  op.header.length = bytes;
  op.data = static_cast<const std::byte*>(data);
  op.bytes = bytes;
  PeerLink& link = peers_[position];
  on_link([&] {
    if (bytes >= kByReferenceMin && link.out->by_reference()) {
      if (const auto body = link.out->offer_reference(op.data, bytes, link.references_sent + 1)) {
        op.by_reference = true;
        op.header.kind = MessageKind::kReference;
        op.ticket = ++link.references_sent;
        op.body = *body;
      }
    }
    make_inline(op);
    // Out at once when nothing is queued before it: the peer can start on it while this process
    // posts the rest of the call.
    if (s.send_next + 1 == s.sends.size()) progress_send(link, op);
  });
}

void Exchange::make_inline(SendOp& op) {
  const auto [payload, payload_bytes] = payload_of(op);
  const size_t total = wire_bytes(op);
  if (total == kHeaderBytes + payload_bytes || total > sizeof(op.inline_message)) return;
  std::memcpy(op.inline_message, &op.header, kHeaderBytes);
  if (payload_bytes > 0) std::memcpy(op.inline_message + kHeaderBytes, payload, payload_bytes);
  std::memset(op.inline_message + kHeaderBytes + payload_bytes, 0,
              total - kHeaderBytes - payload_bytes);
  op.inline_bytes = total;
}

void Exchange::forward_mismatch(std::span<const int> positions, const Fingerprint& odd,
                                int odd_process) {
  MessageHeader h;
  h.kind = MessageKind::kMismatch;
  h.fingerprint = encode(odd);
  h.length = static_cast<uint64_t>(odd_process);
  const auto until = Waiter::Clock::now() + kMismatchFlushTimeout;
  for (int p : positions) {
    // A stream in the middle of a message cannot take a header without corrupting it; that
    // peer learns of the failure from its own checks or the timeout.
    const PeerState& s = state_[p];
    if (s.active && s.send_next < s.sends.size() && s.sends[s.send_next].sent > 0) continue;
    size_t sent = 0;
    while (sent < kHeaderBytes && Waiter::Clock::now() < until) {
      sent += peers_[p].out->write_some(
          {reinterpret_cast<const std::byte*>(&h) + sent, kHeaderBytes - sent}, {});
      if (sent < kHeaderBytes) std::this_thread::yield();
    }
  }
}

void Exchange::recv(int position, size_t bytes, size_t grain, Sink sink) {
  RecvOp op{};
  op.bytes = bytes;
  op.grain = std::clamp<size_t>(grain, 1, sizeof(op.carry));
  op.sink = sink;
  state(position).recvs.push_back(op);
  expect_reference(position, nullptr, bytes);
}

void Exchange::recv_into(int position, void* dst, size_t bytes) {
  RecvOp op{};
  op.bytes = bytes;
  op.grain = 1;
  op.dst = static_cast<std::byte*>(dst);
  state(position).recvs.push_back(op);
  expect_reference(position, op.dst, bytes);
}

void Exchange::expect_reference(int position, std::byte* dst, size_t bytes) {
  // The sender's rule in send(): payloads this large go by reference over such links.
  Stream& in = *peers_[position].in;
  if (bytes >= kByReferenceMin && in.by_reference()) {
    on_link([&] { in.expect_reference(dst, bytes); });
  }
}

bool Exchange::maps_buffers(int position) const {
  const PeerLink& link = peers_[position];
  return link.connected() && link.out->maps_buffers() && link.in->maps_buffers();
}

std::optional<ReferenceBody> Exchange::share(int position, const std::byte* data, size_t bytes) {
  return peers_[position].out->share(data, bytes);
}

std::byte* Exchange::reach(int position, const ReferenceBody& body, size_t offset, size_t n,
                           PeerAccess access) {
  try {
    return peers_[position].in->reach_shared(body, offset, n, access);
  } catch (const Error& e) {
    throw Error(fmt::format("{} during {}", e.what(), fingerprint_.describe()));
  }
}

bool Exchange::progress_send(PeerLink& link, SendOp& op) {
  const size_t total = wire_bytes(op);
  const auto [payload, payload_bytes] = payload_of(op);
  bool moved = false;
  if (op.inline_bytes > 0) {
    while (op.sent < total) {
      const size_t n = link.out->write_some({op.inline_message + op.sent, total - op.sent}, {});
      if (n == 0) break;
      op.sent += n;
      moved = true;
    }
    return moved;
  }
  while (op.sent < total) {
    std::span<const std::byte> first;
    std::span<const std::byte> second;
    if (op.sent < kHeaderBytes) {
      first = {reinterpret_cast<const std::byte*>(&op.header) + op.sent, kHeaderBytes - op.sent};
      second = {payload, payload_bytes};
    } else if (op.sent < kHeaderBytes + payload_bytes) {
      const size_t at = op.sent - kHeaderBytes;
      first = {payload + at, payload_bytes - at};
    } else {
      first = {kZeros, total - op.sent};
    }
    const size_t n = link.out->write_some(first, second);
    if (n == 0) break;
    op.sent += n;
    moved = true;
  }
  return moved;
}

void Exchange::accept_header(int position, RecvOp& op) {
  state_[position].arrived = true;
  const MessageHeader& h = op.header;
  const PeerLink& link = peers_[position];
  const bool reserved_clear = h.reserved[0] == 0 && h.reserved[1] == 0 && h.reserved[2] == 0;
  if (h.magic != kMessageMagic || !reserved_clear ||
      (h.kind != MessageKind::kData && h.kind != MessageKind::kMismatch &&
       !(h.kind == MessageKind::kReference && link.in->by_reference()))) {
    throw Error(fmt::format(
        "{} sent a malformed message header (magic {:#x}, kind {}) during {}: the data stream is "
        "corrupt or something other than spmd connected; the communicator is closed",
        link.name, h.magic, static_cast<int>(h.kind), fingerprint_.describe()));
  }
  if (h.kind == MessageKind::kMismatch || h.fingerprint != fingerprint_bytes_) {
    // (a kReference header with another call's fingerprint is a mismatch like any other)
    const std::optional<Fingerprint> theirs = decode(h.fingerprint);
    // A forwarded mismatch names the process whose call differs in its length field.
    const bool forwarded = h.kind == MessageKind::kMismatch;
    if (!theirs || (forwarded && h.length > static_cast<uint64_t>(INT32_MAX))) {
      throw Error(
          fmt::format("{} sent an undecodable call fingerprint during {}; the "
                      "communicator is closed",
                      link.name, fingerprint_.describe()));
    }
    const int odd_process = forwarded ? static_cast<int>(h.length) : link.process;
    last_mismatch_ = Mismatch{*theirs, odd_process};
    throw CollectiveMismatch(mismatch_message(fingerprint_, self_process_, *theirs, odd_process));
  }
  if (h.length != op.bytes && fingerprint_.op == CollectiveOp::kAllToAllV) {
    throw CollectiveMismatch(fmt::format(
        "{} sends {} bytes to process {} in {}, which expects {} bytes from it: the counts of "
        "every pair must agree",
        link.name, h.length, self_process_, fingerprint_.describe(), op.bytes));
  }
  if (h.length != op.bytes) {
    throw Error(fmt::format(
        "{} sent a {}-byte message where {} bytes were expected in {}: the data stream is "
        "corrupt; the communicator is closed",
        link.name, h.length, op.bytes, fingerprint_.describe()));
  }
  op.by_reference = h.kind == MessageKind::kReference;
}

void Exchange::deliver(RecvOp& op, size_t offset, const std::byte* data, size_t n) {
  if (op.dst != nullptr) {
    std::memcpy(op.dst + offset, data, n);
  } else if (n > 0) {
    op.sink(offset, data, n);
  }
}

bool Exchange::progress_recv(int position, PeerLink& link, RecvOp& op) {
  bool moved = false;
  if (op.got == 0) {
    const size_t before = op.got;
    if (take_whole(position, link, op)) return true;
    moved = op.got != before;
  }
  while (op.got < wire_bytes(op)) {
    bool step = false;
    if (op.got < kHeaderBytes) {
      step = read_header_bytes(position, link, op);
    } else if (op.by_reference) {
      step = read_reference_body(link, op);
    } else if (op.got - kHeaderBytes >= op.bytes) {
      step = skip_padding(link, op);
    } else {
      step = read_payload(link, op);
    }
    if (!step) break;
    moved = true;
  }
  return moved;
}

bool Exchange::take_whole(int position, PeerLink& link, RecvOp& op) {
  // Usually a whole message is there at once (always, for a small one over shared memory):
  // take it in one piece. Otherwise take the header, if it is there.
  const std::span<const std::byte> r = link.in->readable();
  if (r.size() < kHeaderBytes) return false;
  std::memcpy(&op.header, r.data(), kHeaderBytes);
  accept_header(position, op);
  const size_t total = wire_bytes(op);
  if (!op.by_reference && r.size() >= total) {
    deliver(op, 0, r.data() + kHeaderBytes, op.bytes);
    link.in->consume(total);
    op.got = total;
    return true;
  }
  link.in->consume(kHeaderBytes);
  op.got = kHeaderBytes;
  return false;
}

bool Exchange::read_header_bytes(int position, PeerLink& link, RecvOp& op) {
  const std::span<const std::byte> r = link.in->readable();
  if (r.empty()) return false;
  const size_t k = std::min(r.size(), kHeaderBytes - op.got);
  std::memcpy(reinterpret_cast<std::byte*>(&op.header) + op.got, r.data(), k);
  link.in->consume(k);
  op.got += k;
  if (op.got == kHeaderBytes) accept_header(position, op);
  return true;
}

// The body of a by-reference message, then the copy out of the sender's memory.
bool Exchange::read_reference_body(PeerLink& link, RecvOp& op) {
  const std::span<const std::byte> r = link.in->readable();
  if (r.empty()) return false;
  const size_t k = std::min(r.size(), wire_bytes(op) - op.got);
  const size_t at = op.got - kHeaderBytes;
  if (at < sizeof(ReferenceBody)) {
    std::memcpy(reinterpret_cast<std::byte*>(&op.body) + at, r.data(),
                std::min(k, sizeof(ReferenceBody) - at));
  }
  link.in->consume(k);
  op.got += k;
  if (op.got == wire_bytes(op)) copy_by_reference(link, op);
  return true;
}

bool Exchange::skip_padding(PeerLink& link, RecvOp& op) {
  const std::span<const std::byte> r = link.in->readable();
  if (r.empty()) return false;
  const size_t k = std::min(r.size(), kHeaderBytes + padded(op.bytes) - op.got);
  link.in->consume(k);
  op.got += k;
  return true;
}

// Payload bytes: straight into the destination when the receive has one and the stream can,
// else through the sink in whole elements (an element split across pieces is gathered first).
bool Exchange::read_payload(PeerLink& link, RecvOp& op) {
  const size_t at = op.got - kHeaderBytes;  // payload offset
  const size_t left = op.bytes - at;
  if (op.dst != nullptr) {
    const size_t k = link.in->read_direct(op.dst + at, left);
    if (k > 0) {
      op.got += k;
      return true;
    }
  }
  const std::span<const std::byte> r = link.in->readable();
  if (r.empty()) return false;
  size_t k = std::min(r.size(), left);
  if (op.carry_len > 0 || k < op.grain) {
    const size_t start = at - op.carry_len;
    k = std::min(k, op.grain - op.carry_len);
    std::memcpy(op.carry + op.carry_len, r.data(), k);
    op.carry_len += k;
    if (op.carry_len == op.grain || k == left) {
      deliver(op, start, op.carry, op.carry_len);
      op.carry_len = 0;
    }
  } else {
    k -= k % op.grain;
    deliver(op, at, r.data(), k);
  }
  link.in->consume(k);
  op.got += k;
  return true;
}

void Exchange::run() {
  // The live view's record of this call ends with it, however it ends.
  struct EndShownWait {
    Exchange& e;
    ~EndShownWait() {
      if (e.shown_wait_ == 0) return;
      if (const CoordClient* coord = e.waiter_->coord()) coord->activity().end_wait(e.shown_wait_);
      e.shown_wait_ = 0;
    }
  } end_shown{*this};
  // A failed call leaves transfers that may still use the caller's buffers (UCX's posted
  // operations): they stop before the caller gets the error and may free the buffers. (A try
  // costs a call that succeeds nothing, where a guard reading the count of exceptions in flight
  // would cost every call two reads of it.)
  try {
    try {
      run_until_done();
      if (const CoordClient* coord = waiter_->coord()) {
        coord->activity().note_finished(op_name(fingerprint_.op), fingerprint_.sequence);
      }
    } catch (const CollectiveMismatch&) {
      flush_first_headers();
      throw;
    } catch (const DeadlineExceeded&) {
      throw;
    } catch (const PeerFailure&) {
      throw;
    } catch (const Error&) {
      // A broken link usually means a dead peer, which the coordination service is about to
      // name: prefer its report (process, host, pid) to the socket's.
      waiter_->await_abort(kBrokenLinkGrace);
      throw;
    }
  } catch (...) {
    cancel_transfers();
    throw;
  }
}

void Exchange::cancel_transfers() noexcept {
  for (int p : active_) {
    peers_[p].out->cancel();
    peers_[p].in->cancel();
  }
}

void Exchange::flush_first_headers() {
  // Every peer must see this call's header to notice the mismatch too: a peer that hears
  // nothing from this process would wait for it until its timeout.
  const auto until = Waiter::Clock::now() + kMismatchFlushTimeout;
  bool pending = true;
  while (pending && Waiter::Clock::now() < until) {
    pending = false;
    for (int p : active_) {
      PeerState& s = state_[p];
      if (s.sends.empty() || s.sends.front().sent >= kHeaderBytes) continue;
      SendOp& op = s.sends.front();
      const size_t n = peers_[p].out->write_some(
          {reinterpret_cast<const std::byte*>(&op.header) + op.sent, kHeaderBytes - op.sent}, {});
      op.sent += n;
      pending |= op.sent < kHeaderBytes;
    }
    if (pending) std::this_thread::yield();
  }
}

void Exchange::copy_by_reference(PeerLink& link, RecvOp& op) {
  // Pieces a sink can take whole (a multiple of the grain), or the whole payload into a receive's
  // destination.
  size_t piece = op.bytes;
  if (op.dst == nullptr) {
    piece = std::max(link.in->reference_piece(op.bytes), op.grain);
    piece -= piece % op.grain;
    if (bounce_.size() * sizeof(double) < piece) bounce_.resize(piece / sizeof(double) + 1);
  }
  try {
    for (size_t done = 0; done < op.bytes;) {
      const size_t n = std::min(piece, op.bytes - done);
      std::byte* into =
          op.dst != nullptr ? op.dst + done : reinterpret_cast<std::byte*>(bounce_.data());
      const std::byte* at = link.in->fetch_reference(op.body, done, into, n, *waiter_);
      if (op.dst == nullptr || at != into) take_piece(link, op, done, at, n);
      done += n;
    }
  } catch (const DeadlineExceeded&) {
    throw;
  } catch (const PeerFailure&) {
    throw;
  } catch (const Error& e) {
    // run() waits for the service's report of a dead writer, as for any broken link.
    throw Error(fmt::format("{} during {}", e.what(), fingerprint_.describe()));
  }
  link.in->reference_done();
}

void Exchange::take_piece(const PeerLink& link, RecvOp& op, size_t offset, const std::byte* at,
                          size_t n) {
  // Plain code only under the guard (bus_error_guard.h): a sink is a reduction loop.
  const bool read = catching_bus_errors([&] {
    if (op.dst == nullptr) {
      op.sink(offset, at, n);
    } else {
      stream_copy(op.dst + offset, at, n);
    }
  });
  if (!read) {
    throw Error(fmt::format("{} freed the buffer it shared while this process read it", link.name));
  }
}

void Exchange::run_until_done() {
  leaving_since_.reset();
  for (;;) {
    bool pending = false;
    bool moved = false;
    for (int p : active_) {
      PeerState& s = state_[p];
      PeerLink& link = peers_[p];
      while (s.send_next < s.sends.size()) {
        SendOp& op = s.sends[s.send_next];
        moved |= progress_send(link, op);
        if (op.sent < wire_bytes(op)) break;
        // A buffer shared by reference stays in use until the reader has copied it.
        if (op.by_reference && link.out->references_done() < op.ticket) break;
        ++s.send_next;
      }
      while (s.recv_next < s.recvs.size()) {
        RecvOp& op = s.recvs[s.recv_next];
        moved |= progress_recv(p, link, op);
        if (op.got < wire_bytes(op)) break;
        ++s.recv_next;
      }
      pending |= s.send_next < s.sends.size() || s.recv_next < s.recvs.size();
    }
    if (!pending) return;
    if (moved) {
      waiter_->progressed();
    } else if (waiter_->idle(fds_)) {
      timed_out();
    } else if (shown_wait_ == 0 && waiter_->sleeping()) {
      show_wait();
    } else if (const CoordClient* coord = waiter_->coord();
               coord != nullptr && coord->leaving_count() != 0) {
      check_leaving(*coord);
    }
  }
}

namespace {

// How long a peer that called shutdown() may stay absent before this call gives up on it: long
// enough for messages it sent before leaving to arrive over TCP from another host, far shorter
// than the shutdown barrier the caller would otherwise wait out.
constexpr std::chrono::milliseconds kLeavingGrace{1000};

}  // namespace

void Exchange::check_leaving(const CoordClient& coord) {
  // A peer that left may still have written what this call needs before it did (its messages
  // and the service's notice travel different ways): only a peer absent for kLeavingGrace after
  // the notice was seen — every link polled again meanwhile — is declared gone.
  for (int p : active_) {
    const PeerState& s = state_[p];
    if (s.recv_next >= s.recvs.size() || s.arrived) continue;
    if (!coord.has_left(peers_[p].process)) continue;
    const auto now = Waiter::Clock::now();
    if (!leaving_since_) {
      leaving_since_ = now;
      return;
    }
    if (now - *leaving_since_ < kLeavingGrace) return;
    throw PeerFailure(fmt::format(
        "{} cannot complete in process {}: {} called shutdown() without making this call. Every "
        "process must make the same collective calls in the same order; look for a loop some "
        "processes leave early (the last-batch pitfall) or an exception one process caught and "
        "returned from",
        fingerprint_.describe(), self_process_, peers_[p].name));
  }
  leaving_since_.reset();
}

bool Exchange::absent(int position) const {
  const PeerState& s = state_[position];
  return s.recv_next < s.recvs.size() && !s.arrived;
}

void Exchange::show_wait() {
  const CoordClient* coord = waiter_->coord();
  if (coord == nullptr) return;
  std::vector<int> processes;
  for (int p : active_) {
    if (absent(p)) processes.push_back(peers_[p].process);
  }
  shown_wait_ = coord->activity().begin_wait(fingerprint_.describe(), std::move(processes),
                                             waiter_->idle_since());
}

void Exchange::timed_out() {
  std::vector<std::string> absent_names;
  std::vector<int> absent_processes;
  std::vector<std::string> owing;
  for (int p : active_) {
    const PeerState& s = state_[p];
    if (absent(p)) {
      absent_names.push_back(peers_[p].name);
      absent_processes.push_back(peers_[p].process);
    } else if (s.recv_next < s.recvs.size() || s.send_next < s.sends.size()) {
      owing.push_back(peers_[p].name);
    }
  }
  if (!absent_names.empty()) {
    throw DeadlineExceeded(
        fmt::format("{} timed out (collective timeout: SPMD_COLLECTIVE_TIMEOUT, "
                    "Options::collective_timeout) in process {}: {} did not arrive at this call; "
                    "check that every participant makes the same sequence of collective calls.{}",
                    fingerprint_.describe(), self_process_, fmt::join(absent_names, ", "),
                    describe_peers_now(waiter_->coord(), absent_processes)));
  }
  // A point-to-point send completes only when its peer receives: two processes sending to each
  // other before receiving (crossed sends) wait for each other until here.
  const bool p2p = fingerprint_.op == CollectiveOp::kSendRecv;
  throw DeadlineExceeded(fmt::format(
      "{} timed out (collective timeout: SPMD_COLLECTIVE_TIMEOUT, Options::collective_timeout) "
      "in process {} while exchanging data with {}{}",
      fingerprint_.describe(), self_process_, fmt::join(owing, ", "),
      p2p ? "; a send returns only once the peer receives: if both sides send to each other "
            "before receiving (crossed sends), neither does — receive first on one side, or use "
            "permute"
          : ""));
}

}  // namespace spmd
