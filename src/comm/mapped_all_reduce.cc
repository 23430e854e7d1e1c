// All-reduce straight through comm memory, for processes of one host that map each other's shared
// buffers (comm/peer_mappings.h): process p reduces block p of the buffer out of every process's
// input and writes the result into every process's output itself, with streaming stores. Each
// input byte is read once and each output byte written once, the least memory traffic an
// all-reduce can have (4N in all on two processes, N the buffer, where the reduce-scatter and
// all-gather by reference move 5N and through the rings 8N); the rings carry two small messages
// per peer: the offer of the buffers and "done".
//
// Order: a process touches a peer's buffers only between the peer's offer, sent as the peer
// enters the call (its input is ready and its output free), and its own "done", sent after its
// streaming stores are fenced; a process returns once every peer's "done" is in, so its output is
// whole and its input no longer read. In place works: block p of any input is read and written by
// process p alone, a tile read before it is written.
//
// With an epilogue (all_reduce_then), process p applies it to block p between the sum and the
// stores, a tile at a time, so every output receives the epilogue's values and each process
// computes it on 1/P of the elements.
//
// After a failure the output is undefined, as for every collective, and a peer may still be
// writing its block into it for as long as its share of the work takes (milliseconds).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "comm/call.h"
#include "comm/reduce_kernels.h"
#include "comm/streaming_store.h"
#include "runtime/bus_error_guard.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// What a process tells each peer as it enters the call.
struct Offer {
  uint64_t usable = 0;  // 1: `in` and `out` name ranges of this process's shared buffers
  ReferenceBody in;
  ReferenceBody out;
};
static_assert(sizeof(Offer) == 88, "the offer is a message");

// This process's offer, as the link to the peer at `position` shares its buffers.
Offer offer_to(Call& c, int position, const std::byte* in, std::byte* out, size_t bytes) {
  Offer o;
  const std::optional<ReferenceBody> in_body = c.ex.share(position, in, bytes);
  const std::optional<ReferenceBody> out_body = c.ex.share(position, out, bytes);
  if (in_body && out_body) {
    o.usable = 1;
    o.in = *in_body;
    o.out = *out_body;
  }
  return o;
}

// Every process's offer, this one's included; the first message of the call with every peer.
std::vector<Offer> exchange_offers(Call& c, Members m, const std::byte* in, std::byte* out) {
  const int P = m.size();
  // The same to every peer: a body names this process's buffer whoever reads it, and every link
  // of the call maps buffers.
  const Offer mine = offer_to(c, m.positions[m.me == 0 ? 1 : 0], in, out, c.bytes());
  std::vector<Offer> offers(P);
  offers[m.me] = mine;
  for (int q = 0; q < P; ++q) {
    if (q == m.me) continue;
    c.ex.send(m.positions[q], &mine, sizeof(Offer));
    c.ex.recv_into(m.positions[q], &offers[q], sizeof(Offer));
  }
  c.ex.run();
  for (int q = 0; q < P; ++q) {
    if (offers[q].usable > 1) {
      throw Error(fmt::format("{} sent a malformed buffer offer during {}",
                              c.ex.peer_name(m.positions[q]), c.fp.describe()));
    }
  }
  return offers;
}

// reduce_to_all_streaming with `then` between the sum and the stores, over the `count` elements
// from element `first` of the result: a tile of kEpilogueTile bytes at a time, the sum into one
// of this thread's epilogue tiles and the epilogue's values into the other, streamed from there
// to every output. Each touch of a peer's memory is guarded on its own (the epilogue is not plain
// code, bus_error_guard.h, and reads only this process's memory); false when one ended in a SIGBUS.
bool reduce_then_to_all(DType dtype, ReduceOp op, std::span<const std::byte* const> ins,
                        std::span<std::byte* const> outs, const AllReduceEpilogue& then,
                        size_t first, size_t count) {
  std::byte* sum = epilogue_tiles();
  std::byte* values = sum + kEpilogueTile;
  const size_t elem = dtype_size(dtype);
  const size_t per_tile = kEpilogueTile / elem;
  for (size_t done = 0; done < count; done += per_tile) {
    const size_t k = std::min(per_tile, count - done);
    const size_t at = done * elem;
    const bool read = catching_bus_errors([&] {
      reduce_to(dtype, op, sum, ins[0] + at, ins[1] + at, k);
      for (size_t q = 2; q < ins.size(); ++q) reduce_into(dtype, op, sum, ins[q] + at, k);
    });
    if (!read) return false;
    then(sum, values, first + done, k);
    const bool written = catching_bus_errors([&] {
      for (std::byte* o : outs) stream_copy(o + at, values, k * elem);
    });
    if (!written) return false;
  }
  return true;
}

// The peers, for an error that cannot tell which of them freed a buffer.
std::string peer_names(const Call& c, Members m) {
  std::string names;
  for (int q = 0; q < m.size(); ++q) {
    if (q == m.me) continue;
    if (!names.empty()) names += ", ";
    names += c.ex.peer_name(m.positions[q]);
  }
  return names;
}

}  // namespace

bool maps_every_peer(const Call& c, Members m) {
  for (int q = 0; q < m.size(); ++q) {
    if (q != m.me && !c.ex.maps_buffers(m.positions[q])) return false;
  }
  return m.size() > 1;
}

bool mapped_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out,
                       const AllReduceEpilogue* then) {
  const int P = m.size();
  const std::vector<Offer> offers = exchange_offers(c, m, in, out);
  for (const Offer& o : offers) {
    if (o.usable != 1) return false;
  }

  // Block m.me of every process's input and output, as this process reaches it.
  const auto [first, last] = balanced_block(0, c.fp.count, P, m.me);
  const size_t at = first * c.elem();
  const size_t n = (last - first) * c.elem();
  std::vector<const std::byte*> ins(P);
  std::vector<std::byte*> outs(P);
  for (int q = 0; q < P; ++q) {
    if (q == m.me) {
      ins[q] = in + at;
      outs[q] = out + at;
    } else {
      ins[q] = c.ex.reach(m.positions[q], offers[q].in, at, n, PeerAccess::kRead);
      outs[q] = c.ex.reach(m.positions[q], offers[q].out, at, n, PeerAccess::kWrite);
    }
  }
  // This process's output first: tiles take whole lines of it.
  std::swap(outs[0], outs[m.me]);
  const DType dtype = c.dtype;
  const ReduceOp op = c.fp.reduce;
  const size_t count = last - first;
  const bool whole =
      then != nullptr
          ? reduce_then_to_all(dtype, op, ins, outs, *then, first, count)
          : catching_bus_errors([&] { reduce_to_all_streaming(dtype, op, ins, outs, count); });
  if (!whole) {
    throw Error(
        fmt::format("a peer freed a buffer it shared while this process reduced into it, "
                    "during {} (peers: {})",
                    c.fp.describe(), peer_names(c, m)));
  }

  const uint64_t done = 1;
  std::vector<uint64_t> theirs(P);
  for (int q = 0; q < P; ++q) {
    if (q == m.me) continue;
    c.ex.send(m.positions[q], &done, sizeof(done));
    c.ex.recv_into(m.positions[q], &theirs[q], sizeof(theirs[q]));
  }
  c.ex.run();
  return true;
}

}  // namespace spmd
