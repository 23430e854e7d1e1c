// The exchange's sends: framing a message (inline when small, by reference when large over a
// link that allows it), moving it out as the stream takes it, and the headers a mismatch must
// still hand to peers.
#include <cstring>
#include <thread>

#include "comm/exchange.h"

namespace spmd {
namespace {

alignas(64) constexpr std::byte kZeros[kMessageAlign] = {};

}  // namespace

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

std::optional<ReferenceBody> Exchange::share(int position, const std::byte* data, size_t bytes) {
  return peers_[position].out->share(data, bytes);
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

}  // namespace spmd
