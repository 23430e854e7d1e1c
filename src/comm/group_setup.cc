// Creating a process group: the links to every other process of the group, through shared
// memory on the same host and TCP or UCX across hosts (or one of them everywhere, as
// SPMD_TRANSPORT says), agreed through the coordination service's key-value store.
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

#include "comm/peer_mappings.h"
#include "comm/peers_now.h"
#include "comm/process_group.h"
#include "comm/shared_buffers.h"
#include "comm/shm_ring.h"
#include "comm/striped_stream.h"
#include "comm/tcp_handshake.h"
#include "comm/tcp_stream.h"
#include "comm/ucx_transport.h"
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
  if (!CommOptions::shm_within_host(choice)) return order;
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
  // The UCX workers' addresses (hex) for peers on this host and on others, or "-".
  std::string ucx_within = "-";
  std::string ucx_across = "-";
  // This process's shared probe buffer (shared_buffers.h): its id, descriptor and word, for
  // peers to test mapping its buffers; fd -1 where it has none.
  uint64_t share_id = 0;
  int64_t share_fd = -1;
  uint64_t share_word = 0;
};

std::string encode_record(const Record& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.shm, r.endpoint, r.nonce, r.pid, r.probe,
                     r.ucx_within, r.ucx_across, r.share_id, r.share_fd + 1, r.share_word);
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
  if (parts.size() != 10) {
    throw Error(fmt::format("malformed communicator record from {}: {:?}", from, s));
  }
  Record r{parts[0],         parts[1], number(parts[2]), number(parts[3]),
           number(parts[4]), parts[5], parts[6]};
  r.share_id = number(parts[7]);
  const uint64_t fd = number(parts[8]);  // descriptor + 1
  if (fd > (uint64_t{1} << 31)) {
    throw Error(fmt::format("malformed communicator record from {}: {:?}", from, s));
  }
  r.share_fd = static_cast<int64_t>(fd) - 1;
  r.share_word = number(parts[9]);
  return r;
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

// The steps of creating a multi-process group, in order (run()). Each process publishes a
// record (its shared-memory segment, TCP endpoint, the addresses of its UCX workers for peers on
// its host and on others, a nonce, its pid and a probe address) under the group's key prefix,
// reads every peer's, maps the rings of same-host peers, agrees with them on single-copy
// transfers, makes UCX endpoints to the peers both ends offered UCX to, connects to the rest over
// TCP (the lower position connects, the higher accepts), and meets them at a barrier before the
// names go.
class GroupSetup {
 public:
  GroupSetup(ProcessGroup& group, std::span<const int> devices, uint64_t id,
             const CommHandles& handles)
      : group_(group),
        g_(group.layout_),
        devices_(devices),
        id_(id),
        handles_(handles),
        kv_(handles.coord),
        prefix_(fmt::format("spmd/comm/{:016x}", id)),
        choice_(handles.options.transport),
        capacity_(handles.options.shm_ring_bytes),
        wait_(setup_wait(handles)),
        deadline_(Clock::now() + wait_),
        shm_(static_cast<size_t>(g_.positions()), false),
        ucx_peer_(static_cast<size_t>(g_.positions()), false),
        records_(static_cast<size_t>(g_.positions())) {}

  void run() {
    publish();
    for (int q = 0; q < g_.positions(); ++q) {
      if (q != g_.self) records_[q] = await_record(q);
    }
    attach_shared_memory();
    agree_on_single_copy();
    choose_ucx();
    if (any_ucx_) connect_ucx();
    if (any_tcp_) connect_tcp();
    finish();
  }

 private:
  // SPMD_COLLECTIVE_TIMEOUT bounds creation too: shard_map makes communicators inside a call.
  static std::chrono::nanoseconds setup_wait(const CommHandles& handles) {
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(handles.setup_timeout);
    if (const auto t = handles.options.collective_timeout) wait = std::min(wait, *t);
    return wait;
  }

  std::chrono::milliseconds left() const {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()),
                    std::chrono::milliseconds(1));
  }

  std::string name_of(int position) const { return peer_name(handles_, g_.processes[position]); }

  // Decides which peers are reached through shared memory, makes this process's segment, its
  // listener and its UCX workers as the others need them, publishes them.
  void publish() {
    bool network_within = false;  // peers on this host reached over a network transport
    bool network_across = false;
    for (int q = 0; q < g_.positions(); ++q) {
      if (q == g_.self) continue;
      shm_[q] = CommOptions::shm_within_host(choice_) && g_.same_host(q);
      if (!shm_[q]) (g_.same_host(q) ? network_within : network_across) = true;
    }
    const bool any_network = network_within || network_across;
    mine_ = Record{"-", "-", std::random_device{}() * 0x100000001ull + std::random_device{}(),
                   static_cast<uint64_t>(::getpid()), 0};
    group_.probe_word_ = mine_.nonce;
    mine_.probe = reinterpret_cast<uint64_t>(&group_.probe_word_);
    if (handles_.options.shm_map_buffers && CommOptions::shm_within_host(choice_)) {
      const SharedProbe& share = shared_probe();
      mine_.share_id = share.id;
      mine_.share_fd = share.fd;
      mine_.share_word = share.word;
    }
    my_rings_ = ring_order(g_, g_.self, choice_);
    if (!my_rings_.empty()) {
      mine_.shm = fmt::format("/spmd-{}-{:016x}", ::getpid(), id_);
      group_.segments_.push_back(
          ShmSegment::create(mine_.shm, my_rings_.size() * ring_footprint(capacity_)));
    }
    const bool offer_ucx = any_network && (CommOptions::ucx_required(choice_) ||
                                           (choice_ == TransportChoice::kAuto && ucx_has_fabric()));
    if (offer_ucx && network_within) {
      ucx_within_ = open_ucx_worker(UcxReach::kWithinHost);
      mine_.ucx_within = ucx_within_->address();
    }
    if (offer_ucx && network_across) {
      ucx_across_ = open_ucx_worker(UcxReach::kAcrossHosts);
      mine_.ucx_across = ucx_across_->address();
    }
    if (any_network && !CommOptions::ucx_required(choice_)) {
      listener_ = std::make_unique<DataListener>(handles_.data_address);
      mine_.endpoint = listener_->endpoint();
    }
    kv_.key_value_set(fmt::format("{}/{}", prefix_, g_.self), encode_record(mine_), true);
  }

  // Peer q's record. Waited for in slices, so that a peer that called shutdown() (and so will
  // never join) is named at once rather than after the whole timeout.
  Record await_record(int q) {
    while (true) {
      try {
        const std::string record = kv_.blocking_key_value_get(fmt::format("{}/{}", prefix_, q),
                                                              std::min(left(), kJoinSlice));
        return decode_record(record, name_of(q));
      } catch (const DeadlineExceeded&) {
        if (handles_.coord->has_left(g_.processes[q])) {
          throw PeerFailure(fmt::format(
              "creating a communicator of devices [{}] cannot complete: {} called shutdown() "
              "without joining; every process owning a device of the group must create it",
              fmt::join(devices_, ", "), name_of(q)));
        }
        if (Clock::now() < deadline_) continue;
        throw DeadlineExceeded(fmt::format(
            "creating a communicator of devices [{}] timed out after {} ms: {} did not join; "
            "every process owning a device of the group must create it (make the same "
            "collective calls in the same order).{}",
            fmt::join(devices_, ", "),
            std::chrono::duration_cast<std::chrono::milliseconds>(wait_).count(), name_of(q),
            describe_peers_now(handles_.coord.get(), {g_.processes[q]})));
      }
    }
  }

  PeerLink& link_to(int q) {
    PeerLink& link = group_.links_[q];
    link.process = g_.processes[q];
    link.name = name_of(q);
    return link;
  }

  // Maps each same-host peer's segment: this process writes into its slot there and reads its
  // own segment's slot for that peer.
  void attach_shared_memory() {
    for (int q = 0; q < g_.positions(); ++q) {
      if (q == g_.self || !shm_[q]) continue;
      PeerLink& link = link_to(q);
      const std::vector<int> their_rings = ring_order(g_, q, choice_);
      if (records_[q].shm == "-") {
        throw Error(
            fmt::format("{} published no shared memory although it shares this host", link.name));
      }
      ShmSegment theirs =
          ShmSegment::open(records_[q].shm, their_rings.size() * ring_footprint(capacity_));
      const size_t out_slot =
          std::find(their_rings.begin(), their_rings.end(), g_.self) - their_rings.begin();
      const size_t in_slot = std::find(my_rings_.begin(), my_rings_.end(), q) - my_rings_.begin();
      auto writer = std::make_unique<ShmRingWriter>(
          theirs.data() + out_slot * ring_footprint(capacity_), capacity_, link.name);
      auto reader = std::make_unique<ShmRingReader>(
          group_.segments_.front().data() + in_slot * ring_footprint(capacity_), capacity_,
          link.name);
      link.out = writer.get();
      link.in = reader.get();
      link.streams.push_back(std::move(writer));
      link.streams.push_back(std::move(reader));
      group_.segments_.push_back(std::move(theirs));
    }
  }

  // One copy between same-host processes, by the same rule for each of its two ways: where every
  // one of them can do it to every other. Each tests its reads of every peer's memory
  // (process_vm_readv, when SPMD_SHM_SINGLE_COPY asks for it) and its mappings of every peer's
  // shared probe buffer (unless SPMD_SHM_MAP_BUFFERS=0), publishes its two verdicts, and all use
  // the host-wide AND of each.
  void agree_on_single_copy() {
    if (my_rings_.empty()) return;
    bool copies = handles_.options.shm_single_copy;
    bool maps = handles_.options.shm_map_buffers;
    for (int q : my_rings_) {
      const Record& r = records_[q];
      copies = copies && can_read(r.pid, r.probe, r.nonce);
      maps = maps && r.share_fd >= 0 &&
             PeerMappings::can_map(static_cast<int64_t>(r.pid), static_cast<int>(r.share_fd),
                                   r.share_id, r.share_word);
    }
    const auto key = [&](int q) { return fmt::format("{}/{}/single-copy", prefix_, q); };
    kv_.key_value_set(key(g_.self), fmt::format("{}{}", copies ? 1 : 0, maps ? 1 : 0), true);
    for (int q : my_rings_) {
      const std::string theirs = kv_.blocking_key_value_get(key(q), left());
      copies = copies && theirs.size() == 2 && theirs[0] == '1';
      maps = maps && theirs.size() == 2 && theirs[1] == '1';
    }
    if (!copies && !maps) return;
    for (int q : my_rings_) {
      PeerLink& link = group_.links_[q];
      static_cast<ShmRingWriter*>(link.out)->enable_references(copies, maps);
      static_cast<ShmRingReader*>(link.in)->enable_references(static_cast<int64_t>(records_[q].pid),
                                                              copies, maps);
    }
  }

  // UCX for a peer when both offered it (under auto, both found a fabric); TCP for the other
  // peers not reached through shared memory.
  void choose_ucx() {
    for (int q = 0; q < g_.positions(); ++q) {
      if (q == g_.self || shm_[q]) continue;
      const bool theirs = ucx_address(q) != "-";
      if (CommOptions::ucx_required(choice_) && !theirs) {
        throw Error(fmt::format(
            "{} offered no UCX address although this process uses SPMD_TRANSPORT={}: every "
            "process of the job must use the same transport setting",
            name_of(q), transport_name(choice_)));
      }
      ucx_peer_[q] = ucx_worker(q) != nullptr && theirs;
      any_ucx_ |= ucx_peer_[q];
      any_tcp_ |= !ucx_peer_[q];
    }
  }

  // The worker of this process, and the address of q's, for reaching q.
  UcxWorker* ucx_worker(int q) const { return (g_.same_host(q) ? ucx_within_ : ucx_across_).get(); }
  const std::string& ucx_address(int q) const {
    return g_.same_host(q) ? records_[q].ucx_within : records_[q].ucx_across;
  }

  void connect_ucx() {
    for (int q = 0; q < g_.positions(); ++q) {
      if (!ucx_peer_[q]) continue;
      PeerLink& link = link_to(q);
      auto stream = ucx_worker(q)->connect(
          ucx_address(q), link.name, static_cast<uint32_t>(g_.self), static_cast<uint32_t>(q));
      link.out = link.in = stream.get();
      link.streams.push_back(std::move(stream));
    }
  }

  void attach_tcp(int q, const std::vector<int>& fds) {
    PeerLink& link = link_to(q);
    auto stream = tcp_link(fds, link.name);
    link.out = link.in = stream.get();
    link.streams.push_back(std::move(stream));
  }

  // Connects to the lower positions reached over TCP and accepts the higher ones, each pair
  // with tcp_streams connections (every process of the job has the same setting).
  void connect_tcp() {
    const int streams = handles_.options.tcp_streams;
    std::set<int> higher;
    for (int q = 0; q < g_.positions(); ++q) {
      if (q == g_.self || shm_[q] || ucx_peer_[q]) continue;
      if (q > g_.self) {
        higher.insert(q);
        continue;
      }
      if (records_[q].endpoint == "-") {
        throw Error(fmt::format("{} published no TCP endpoint", name_of(q)));
      }
      Handshake hello;
      hello.group = id_;
      hello.from = static_cast<uint32_t>(g_.self);
      hello.to = static_cast<uint32_t>(q);
      hello.nonce = records_[q].nonce;
      hello.streams = static_cast<uint32_t>(streams);
      std::vector<int> fds;
      for (int k = 0; k < streams; ++k) {
        hello.stream = static_cast<uint32_t>(k);
        fds.push_back(connect_peer(records_[q].endpoint, hello, deadline_));
      }
      attach_tcp(q, fds);
    }
    if (higher.empty()) return;
    for (auto& [q, fds] : accept_peers(*listener_, id_, g_.self, mine_.nonce, higher, streams,
                                       deadline_, handles_.coord.get())) {
      attach_tcp(q, fds);
    }
  }

  // Everyone has mapped and connected: names and records can go.
  void finish() {
    kv_.wait_at_barrier(prefix_ + "/ready", left(), g_.processes);
    log_transports();
    if (!my_rings_.empty()) group_.segments_.front().unlink();
    kv_.key_value_delete(fmt::format("{}/{}", prefix_, g_.self));  // and its single-copy verdict
  }

  // SPMD_LOG_LEVEL=info: which peers this process reaches over which transport.
  void log_transports() const {
    if (!spdlog::should_log(spdlog::level::info)) return;
    std::vector<int> shm;
    std::vector<int> tcp;
    std::vector<int> ucx;
    bool ucx_within = false;
    bool ucx_across = false;
    for (int q = 0; q < g_.positions(); ++q) {
      if (q == g_.self || g_.processes[q] == g_.processes[g_.self]) continue;
      (shm_[q] ? shm : ucx_peer_[q] ? ucx : tcp).push_back(g_.processes[q]);
      (g_.same_host(q) ? ucx_within : ucx_across) |= ucx_peer_[q];
    }
    std::string about_ucx;
    if (!ucx.empty()) about_ucx = " (" + ucx_summary() + ")";
    if (ucx_within) about_ucx += "; ucx within this host: " + ucx_settings(UcxReach::kWithinHost);
    if (ucx_across) about_ucx += "; ucx across hosts: " + ucx_settings(UcxReach::kAcrossHosts);
    spdlog::info(
        "communicator of devices [{}]: shared memory with processes [{}], tcp with "
        "processes [{}], ucx with processes [{}]{}",
        fmt::join(devices_, ", "), fmt::join(shm, ", "), fmt::join(tcp, ", "), fmt::join(ucx, ", "),
        about_ucx);
  }

  ProcessGroup& group_;
  const GroupLayout& g_;
  std::span<const int> devices_;
  uint64_t id_;
  const CommHandles& handles_;
  distributed::Client kv_;
  std::string prefix_;
  TransportChoice choice_;
  size_t capacity_;
  std::chrono::nanoseconds wait_;
  Clock::time_point deadline_;
  std::vector<bool> shm_;       // by position: reached through shared memory
  std::vector<bool> ucx_peer_;  // by position: reached through UCX
  bool any_tcp_ = false;
  bool any_ucx_ = false;
  // This process's UCX workers for peers on its host and on others, when it offered them.
  std::shared_ptr<UcxWorker> ucx_within_;
  std::shared_ptr<UcxWorker> ucx_across_;
  Record mine_;
  std::vector<int> my_rings_;
  std::unique_ptr<DataListener> listener_;
  std::vector<Record> records_;  // by position
};

std::shared_ptr<ProcessGroup> ProcessGroup::create(std::span<const int> devices, uint64_t id,
                                                   const CommHandles& handles) {
  GroupLayout layout = make_group_layout(devices, id, *handles.view);
  std::shared_ptr<ProcessGroup> group(new ProcessGroup(std::move(layout), handles));
  const GroupLayout& g = group->layout_;
  if (g.positions() > 1) {
    if (!handles.coord) {
      throw FailedPrecondition(
          "a communicator spanning processes needs spmd::distributed::initialize()");
    }
    GroupSetup(*group, devices, id, handles).run();
  }
  group->exchange_ = std::make_unique<Exchange>(group->links_, g.self, handles.view->process_index);
  group->coord_ = handles.coord;
  group->multi_process_ = handles.coord != nullptr;
  group->handles_.coord.reset();
  return group;
}

}  // namespace spmd
