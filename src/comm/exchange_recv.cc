// The exchange's receives: a message's header checked against the call, its payload delivered to
// a destination or a sink in whole elements, and a by-reference payload copied out of the
// sender's memory under the bus-error guard.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "comm/exchange.h"
#include "comm/streaming_store.h"
#include "runtime/bus_error_guard.h"
#include "spmd/error.h"

namespace spmd {

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

std::byte* Exchange::reach(int position, const ReferenceBody& body, size_t offset, size_t n,
                           PeerAccess access) {
  try {
    return peers_[position].in->reach_shared(body, offset, n, access);
  } catch (const Error& e) {
    throw Error(fmt::format("{} during {}", e.what(), fingerprint_.describe()));
  }
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

}  // namespace spmd
