// Creating a process group: the links to every other process of the group, through shared
// memory on the same host and TCP across hosts (or everywhere with SPMD_TRANSPORT=tcp), agreed
// through the coordination service's key-value store.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <random>
#include <set>

#include "comm/process_group.h"
#include "comm/shm_ring.h"
#include "comm/striped_stream.h"
#include "comm/tcp_handshake.h"
#include "comm/tcp_stream.h"
#include "comm/waiter.h"
#include "coord/coord_client.h"
#include "spmd/coordination_client.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using Clock = std::chrono::steady_clock;

using TransportChoice = CommOptions::Transport;

// Bytes sent on one connection before moving to the next when a pair uses several.
constexpr size_t kStripeBytes = size_t{256} << 10;

// The link's stream over `fds` (one connection, or several striped).
std::unique_ptr<Stream> tcp_link(const std::vector<int>& fds, const std::string& name) {
  if (fds.size() == 1) return std::make_unique<TcpStream>(fds[0], name);
  std::vector<std::unique_ptr<Stream>> parts;
  parts.reserve(fds.size());
  for (int fd : fds) parts.push_back(std::make_unique<TcpStream>(fd, name));
  return std::make_unique<StripedStream>(std::move(parts), kStripeBytes);
}

// How long one wait for a peer's record lasts before checking whether that peer has left.
constexpr std::chrono::milliseconds kJoinSlice{250};

std::string peer_name(const CommHandles& h, int process) {
  for (const Device& d : h.view->devices) {
    if (d.process_index() == process)
      return fmt::format("process {} (host {})", process, d.host_id());
  }
  return fmt::format("process {}", process);
}

// The positions position `p` reaches through shared memory, ascending: the order of the rings
// in p's segment.
std::vector<int> ring_order(const GroupLayout& g, int p, TransportChoice choice) {
  std::vector<int> order;
  if (choice != TransportChoice::kAuto) return order;
  for (int q = 0; q < g.positions(); ++q) {
    if (q != p && g.hosts[q] == g.hosts[p]) order.push_back(q);
  }
  return order;
}

struct Record {
  std::string shm;       // segment name or "-"
  std::string endpoint;  // "ip:port" or "-"
  uint64_t nonce = 0;
  uint64_t pid = 0;
  uint64_t probe = 0;  // address of a word holding `nonce`, to test single-copy reads
};

std::string encode_record(const Record& r) {
  return fmt::format("{}|{}|{}|{}|{}", r.shm, r.endpoint, r.nonce, r.pid, r.probe);
}

Record decode_record(const std::string& s, const std::string& from) {
  std::vector<std::string> parts;
  size_t at = 0;
  for (size_t bar; (bar = s.find('|', at)) != std::string::npos; at = bar + 1) {
    parts.push_back(s.substr(at, bar - at));
  }
  parts.push_back(s.substr(at));
  auto number = [&](const std::string& text) {
    char* end = nullptr;
    const uint64_t v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') {
      throw Error(fmt::format("malformed communicator record from {}: {:?}", from, s));
    }
    return v;
  };
  if (parts.size() != 5) {
    throw Error(fmt::format("malformed communicator record from {}: {:?}", from, s));
  }
  return Record{parts[0], parts[1], number(parts[2]), number(parts[3]), number(parts[4])};
}

// True when this process can read `bytes` at `address` in process `pid` and finds `expected`
// there: single-copy transfers work between the two (no ptrace restriction, same user).
bool can_read(uint64_t pid, uint64_t address, uint64_t expected) {
  uint64_t word = 0;
  iovec local{&word, sizeof(word)};
  // An address in the peer, never dereferenced here: the kernel checks it.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  iovec remote{reinterpret_cast<void*>(address), sizeof(word)};
  return ::process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) ==
             static_cast<ssize_t>(sizeof(word)) &&
         word == expected;
}

}  // namespace

std::shared_ptr<ProcessGroup> ProcessGroup::create(std::span<const int> devices, uint64_t id,
                                                   const CommHandles& handles) {
  GroupLayout layout = make_group_layout(devices, id, *handles.view);
  const TransportChoice choice = handles.options.transport;
  std::shared_ptr<ProcessGroup> group(new ProcessGroup(std::move(layout), handles));
  const GroupLayout& g = group->layout_;
  const int P = g.positions();
  if (P > 1) {
    if (!handles.coord) {
      throw FailedPrecondition(
          "a communicator spanning processes needs spmd::distributed::initialize()");
    }
    distributed::Client kv(handles.coord);
    // SPMD_COLLECTIVE_TIMEOUT bounds creation too: shard_map makes communicators inside a call.
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(handles.setup_timeout);
    if (const auto t = handles.options.collective_timeout) wait = std::min(wait, *t);
    const auto deadline = Clock::now() + wait;
    const std::string prefix = fmt::format("spmd/comm/{:016x}", id);

    std::vector<bool> shm(P, false);
    bool any_tcp = false;
    for (int q = 0; q < P; ++q) {
      if (q == g.self) continue;
      shm[q] = choice == TransportChoice::kAuto && g.same_host(q);
      any_tcp |= !shm[q];
    }
    const size_t capacity = handles.options.shm_ring_bytes;
    Record mine{"-", "-", std::random_device{}() * 0x100000001ull + std::random_device{}(),
                static_cast<uint64_t>(::getpid()), 0};
    group->probe_word_ = mine.nonce;
    mine.probe = reinterpret_cast<uint64_t>(&group->probe_word_);
    const std::vector<int> my_rings = ring_order(g, g.self, choice);
    if (!my_rings.empty()) {
      mine.shm = fmt::format("/spmd-{}-{:016x}", ::getpid(), id);
      group->segments_.push_back(
          ShmSegment::create(mine.shm, my_rings.size() * ring_footprint(capacity)));
    }
    std::unique_ptr<DataListener> listener;
    if (any_tcp) {
      listener = std::make_unique<DataListener>(handles.data_address);
      mine.endpoint = listener->endpoint();
    }
    kv.key_value_set(fmt::format("{}/{}", prefix, g.self), encode_record(mine), true);

    std::vector<Record> records(P);
    for (int q = 0; q < P; ++q) {
      if (q == g.self) continue;
      // Waited for in slices, so that a peer that called shutdown() (and so will never join)
      // is named at once rather than after the whole timeout.
      std::string record;
      while (true) {
        const auto remaining =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        try {
          record = kv.blocking_key_value_get(
              fmt::format("{}/{}", prefix, q),
              std::clamp(remaining, std::chrono::milliseconds(1), kJoinSlice));
          break;
        } catch (const DeadlineExceeded&) {
          if (handles.coord->has_left(g.processes[q])) {
            throw PeerFailure(fmt::format(
                "creating a communicator of devices [{}] cannot complete: {} called shutdown() "
                "without joining; every process owning a device of the group must create it",
                fmt::join(devices, ", "), peer_name(handles, g.processes[q])));
          }
          if (Clock::now() < deadline) continue;
          throw DeadlineExceeded(fmt::format(
              "creating a communicator of devices [{}] timed out after {} ms: {} did not join; "
              "every process owning a device of the group must create it (make the same "
              "collective calls in the same order)",
              fmt::join(devices, ", "),
              std::chrono::duration_cast<std::chrono::milliseconds>(wait).count(),
              peer_name(handles, g.processes[q])));
        }
      }
      records[q] = decode_record(record, peer_name(handles, g.processes[q]));
    }

    for (int q = 0; q < P; ++q) {
      if (q == g.self || !shm[q]) continue;
      PeerLink& link = group->links_[q];
      link.process = g.processes[q];
      link.name = peer_name(handles, link.process);
      const std::vector<int> their_rings = ring_order(g, q, choice);
      if (records[q].shm == "-") {
        throw Error(
            fmt::format("{} published no shared memory although it shares this host", link.name));
      }
      ShmSegment theirs =
          ShmSegment::open(records[q].shm, their_rings.size() * ring_footprint(capacity));
      const size_t out_slot =
          std::find(their_rings.begin(), their_rings.end(), g.self) - their_rings.begin();
      const size_t in_slot = std::find(my_rings.begin(), my_rings.end(), q) - my_rings.begin();
      auto writer = std::make_unique<ShmRingWriter>(
          theirs.data() + out_slot * ring_footprint(capacity), capacity, link.name);
      auto reader = std::make_unique<ShmRingReader>(
          group->segments_.front().data() + in_slot * ring_footprint(capacity), capacity,
          link.name);
      link.out = writer.get();
      link.in = reader.get();
      link.streams.push_back(std::move(writer));
      link.streams.push_back(std::move(reader));
      group->segments_.push_back(std::move(theirs));
    }

    // Single copy between same-host processes when every one of them can read every other's
    // memory: each tests its reads, publishes the verdict, and all use the host-wide AND.
    if (!my_rings.empty()) {
      bool ok = handles.options.shm_single_copy;
      for (int q : my_rings)
        ok = ok && can_read(records[q].pid, records[q].probe, records[q].nonce);
      kv.key_value_set(fmt::format("{}/{}/single-copy", prefix, g.self), ok ? "1" : "0", true);
      for (int q : my_rings) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        ok = kv.blocking_key_value_get(fmt::format("{}/{}/single-copy", prefix, q),
                                       std::max(left, std::chrono::milliseconds(1))) == "1" &&
             ok;
      }
      if (ok) {
        for (int q : my_rings) {
          PeerLink& link = group->links_[q];
          static_cast<ShmRingWriter*>(link.out)->enable_references();
          static_cast<ShmRingReader*>(link.in)->enable_references(
              static_cast<int64_t>(records[q].pid));
        }
      }
    }

    if (any_tcp) {
      // Read once here: every process of the job must use the same value.
      const int streams = handles.options.tcp_streams;
      auto attach_tcp = [&](int q, const std::vector<int>& fds) {
        PeerLink& link = group->links_[q];
        link.process = g.processes[q];
        link.name = peer_name(handles, link.process);
        auto stream = tcp_link(fds, link.name);
        link.out = link.in = stream.get();
        link.streams.push_back(std::move(stream));
      };
      std::set<int> higher;
      for (int q = 0; q < P; ++q) {
        if (q == g.self || shm[q]) continue;
        if (q < g.self) {
          Handshake hello;
          hello.group = id;
          hello.from = static_cast<uint32_t>(g.self);
          hello.to = static_cast<uint32_t>(q);
          hello.nonce = records[q].nonce;
          hello.streams = static_cast<uint32_t>(streams);
          if (records[q].endpoint == "-") {
            throw Error(
                fmt::format("{} published no TCP endpoint", peer_name(handles, g.processes[q])));
          }
          std::vector<int> fds;
          for (int k = 0; k < streams; ++k) {
            hello.stream = static_cast<uint32_t>(k);
            fds.push_back(connect_peer(records[q].endpoint, hello, deadline));
          }
          attach_tcp(q, fds);
        } else {
          higher.insert(q);
        }
      }
      if (!higher.empty()) {
        for (auto& [q, fds] : accept_peers(*listener, id, g.self, mine.nonce, higher, streams,
                                           deadline, handles.coord.get())) {
          attach_tcp(q, fds);
        }
      }
    }

    // Everyone has mapped and connected: names and records can go.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    kv.wait_at_barrier(prefix + "/ready", std::max(left, std::chrono::milliseconds(1)),
                       g.processes);
    if (!my_rings.empty()) group->segments_.front().unlink();
    kv.key_value_delete(fmt::format("{}/{}", prefix, g.self));  // and its single-copy verdict
  }
  group->exchange_ = std::make_unique<Exchange>(group->links_, g.self, handles.view->process_index);
  group->coord_ = handles.coord;
  group->multi_process_ = handles.coord != nullptr;
  group->handles_.coord.reset();
  return group;
}

}  // namespace spmd
