// spmd::Communicator: argument checks, then the process group does the work.
#include "spmd/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "comm/process_group.h"
#include "runtime/runtime_state.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// What the collectives engine keeps for the runtime session (session_object).
struct Registry {
  std::mutex mu;
  std::shared_ptr<ProcessGroup> world;
  // How many groups of each device list this process made: the generation in their ids.
  std::map<std::vector<int>, uint64_t> generations;
  // process_communicator(): one group per set of processes.
  std::map<std::vector<int>, std::shared_ptr<ProcessGroup>> by_processes;
};

// One participant's request for the ops that read `in` and write `out`.
Request request(CollectiveOp op, DType dtype, ReduceOp reduce, int root, size_t count,
                const void* in, void* out, std::span<const std::pair<int, int>> pairs = {}) {
  return Request{op,   dtype, reduce,
                 root, count, {static_cast<const std::byte*>(in), static_cast<std::byte*>(out)},
                 pairs};
}

std::shared_ptr<Registry> registry() { return session_object<Registry>(); }

uint64_t next_id(std::span<const int> devices) {
  auto reg = registry();
  std::lock_guard lock(reg->mu);
  return group_id_for(devices, reg->generations[{devices.begin(), devices.end()}]++);
}

}  // namespace

Communicator::Communicator(std::shared_ptr<ProcessGroup> group, int local)
    : group_(std::move(group)), local_(local) {}

int Communicator::rank() const { return group_->layout().local_ranks[local_]; }
int Communicator::size() const { return group_->layout().size(); }
int Communicator::device_id() const { return group_->layout().devices[rank()]; }
const std::vector<int>& Communicator::device_ids() const { return group_->layout().devices; }
uint64_t Communicator::id() const { return group_->layout().id; }
std::string Communicator::transport() const { return group_->transports(); }
void Communicator::close(const std::string& why) { group_->abandon(why); }

size_t Communicator::check_sizes(size_t in, size_t out, Sizes relation) const {
  const size_t n = static_cast<size_t>(size());
  switch (relation) {
    case Sizes::kEqual:
      if (in != out) {
        throw InvalidArgument(
            fmt::format("in has {} elements and out {}; they must be equal", in, out));
      }
      return in;
    case Sizes::kOutIsInTimesSize:
      if (out != in * n) {
        throw InvalidArgument(fmt::format(
            "all_gather: out has {} elements; it must hold in's {} times the {} participants", out,
            in, n));
      }
      return in;
    case Sizes::kInIsOutTimesSize:
      if (in != out * n) {
        throw InvalidArgument(fmt::format(
            "reduce_scatter: in has {} elements; it must hold out's {} times the {} participants",
            in, out, n));
      }
      return out;
    case Sizes::kEqualMultipleOfSize:
      if (in != out || in % n != 0) {
        throw InvalidArgument(fmt::format(
            "all_to_all: in ({}) and out ({}) must have the same number of elements, a multiple "
            "of the {} participants",
            in, out, n));
      }
      return in / n;
  }
  return 0;  // unreachable: every relation is handled above
}

void Communicator::all_reduce(DType dtype, const void* in, void* out, size_t count, ReduceOp op) {
  group_->run(local_, request(CollectiveOp::kAllReduce, dtype, op, -1, count, in, out));
}

void Communicator::all_reduce_then(DType dtype, const void* in, void* out, size_t count,
                                   ReduceOp op, const AllReduceEpilogue& then) {
  Request r = request(CollectiveOp::kAllReduce, dtype, op, -1, count, in, out);
  r.buffers.then = &then;
  group_->run(local_, r);
}

void Communicator::all_gather(DType dtype, const void* in, void* out, size_t count) {
  group_->run(local_, request(CollectiveOp::kAllGather, dtype, ReduceOp::kSum, -1, count, in, out));
}

void Communicator::reduce_scatter(DType dtype, const void* in, void* out, size_t count,
                                  ReduceOp op) {
  group_->run(local_, request(CollectiveOp::kReduceScatter, dtype, op, -1, count, in, out));
}

void Communicator::all_to_all(DType dtype, const void* in, void* out, size_t count) {
  group_->run(local_, request(CollectiveOp::kAllToAll, dtype, ReduceOp::kSum, -1, count, in, out));
}

void Communicator::broadcast(DType dtype, const void* in, void* out, size_t count, int root) {
  if (root < 0 || root >= size()) {
    throw InvalidArgument(
        fmt::format("broadcast root {} is not a rank of this {}-participant "
                    "communicator",
                    root, size()));
  }
  group_->run(local_,
              request(CollectiveOp::kBroadcast, dtype, ReduceOp::kSum, root, count, in, out));
}

void Communicator::permute(DType dtype, const void* in, void* out, size_t count,
                           std::span<const std::pair<int, int>> pairs) {
  std::set<int> sources;
  std::set<int> targets;
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= size() || t < 0 || t >= size()) {
      throw InvalidArgument(
          fmt::format("permute pair ({}, {}) names a rank outside 0 … {}", s, t, size() - 1));
    }
    if (!sources.insert(s).second || !targets.insert(t).second) {
      throw InvalidArgument(fmt::format(
          "permute pair ({}, {}) repeats a source or a target: each rank sends at most once and "
          "receives at most once",
          s, t));
    }
  }
  group_->run(local_,
              request(CollectiveOp::kPermute, dtype, ReduceOp::kSum, -1, count, in, out, pairs));
}

void Communicator::send(DType dtype, const void* data, size_t count, int peer) {
  if (peer < 0 || peer >= size() || peer == rank()) {
    throw InvalidArgument(
        fmt::format("send to rank {}: not another rank of this communicator", peer));
  }
  group_->send(local_, peer, dtype, data, count);
}

void Communicator::recv(DType dtype, void* data, size_t count, int peer) {
  if (peer < 0 || peer >= size() || peer == rank()) {
    throw InvalidArgument(
        fmt::format("recv from rank {}: not another rank of this communicator", peer));
  }
  group_->recv(local_, peer, dtype, data, count);
}

void Communicator::all_to_all_v(DType dtype, const void* in, std::span<const size_t> send_counts,
                                void* out, std::span<const size_t> recv_counts) {
  const GroupLayout& g = group_->layout();
  if (g.local_ranks.size() != 1) {
    throw FailedPrecondition("all_to_all_v needs a communicator with one participant per process");
  }
  if (send_counts.size() != static_cast<size_t>(size()) ||
      recv_counts.size() != static_cast<size_t>(size())) {
    throw InvalidArgument(fmt::format(
        "all_to_all_v: {} send counts and {} receive counts for {} participants; give one per "
        "rank",
        send_counts.size(), recv_counts.size(), size()));
  }
  Request r{CollectiveOp::kAllToAllV,
            dtype,
            ReduceOp::kSum,
            -1,
            0,
            {static_cast<const std::byte*>(in), static_cast<std::byte*>(out)},
            {}};
  r.send_counts = send_counts;
  r.recv_counts = recv_counts;
  group_->run(local_, r);
}

void Communicator::all_to_all_segments(std::span<const std::vector<ConstSegment>> sends,
                                       std::span<const std::vector<MutableSegment>> recvs) {
  if (group_->layout().local_ranks.size() != 1) {
    throw FailedPrecondition(
        "all_to_all_segments needs a communicator with one participant per process");
  }
  if (sends.size() != static_cast<size_t>(size()) || recvs.size() != static_cast<size_t>(size())) {
    throw InvalidArgument(
        fmt::format("all_to_all_segments: {} send lists and {} receive lists for {} participants",
                    sends.size(), recvs.size(), size()));
  }
  Request r{CollectiveOp::kAllToAllV, DType::kUInt8, ReduceOp::kSum, -1, 0, {}, {}};
  r.send_segments = sends;
  r.recv_segments = recvs;
  group_->run(local_, r);
}

void Communicator::barrier() { group_->run(local_, Request{}); }

Communicator Communicator::split(int color, int key) const {
  if (color < 0) throw InvalidArgument(fmt::format("split colour {} must be ≥ 0", color));
  const int64_t mine[2] = {color, key};
  std::vector<int64_t> all(2 * static_cast<size_t>(size()));
  Communicator self = *this;  // the collective does not change the handle
  self.all_gather(std::span<const int64_t>(mine, 2), all);
  // Members of my colour, by (key, rank).
  std::vector<std::pair<int64_t, int>> members;
  for (int r = 0; r < size(); ++r) {
    const size_t at = 2 * static_cast<size_t>(r);
    if (all[at] == color) members.emplace_back(all[at + 1], r);
  }
  std::sort(members.begin(), members.end());
  std::vector<int> devices;
  devices.reserve(members.size());
  for (const auto& [k, r] : members) devices.push_back(device_ids()[r]);
  // The lowest local participant of this colour makes the group for its local peers.
  const GroupLayout& g = group_->layout();
  bool maker = true;
  for (int r : g.local_ranks) {
    if (r < rank() && all[2 * static_cast<size_t>(r)] == color) maker = false;
  }
  auto made = group_->split_result(
      group_->next_split(local_), color,
      [&] { return ProcessGroup::create(devices, next_id(devices), comm_handles()); }, maker);
  const auto& local = made->layout().local_ranks;
  const int new_rank = static_cast<int>(
      std::find_if(members.begin(), members.end(), [&](auto& m) { return m.second == rank(); }) -
      members.begin());
  return Communicator(
      made, static_cast<int>(std::find(local.begin(), local.end(), new_rank) - local.begin()));
}

Communicator world() {
  auto reg = registry();
  std::lock_guard lock(reg->mu);
  if (!reg->world) {
    const CommHandles h = comm_handles();
    std::vector<int> firsts;
    int last_process = -1;
    for (const Device& d : h.view->devices) {
      if (d.process_index() != last_process) firsts.push_back(d.id());
      last_process = d.process_index();
    }
    reg->world = ProcessGroup::create(firsts, group_id_for(firsts, ~0ull), h);
  }
  return Communicator(reg->world, 0);
}

Communicator process_communicator(std::span<const int> processes) {
  const CommHandles h = comm_handles();
  std::vector<int> key(processes.begin(), processes.end());
  if (!std::is_sorted(key.begin(), key.end()) ||
      std::adjacent_find(key.begin(), key.end()) != key.end()) {
    throw InvalidArgument("process_communicator: list each process once, in ascending order");
  }
  if (key.size() == static_cast<size_t>(h.view->process_count)) return world();
  auto reg = registry();
  std::lock_guard lock(reg->mu);
  auto& group = reg->by_processes[key];
  if (!group) {
    std::vector<int> firsts;
    for (int p : key) {
      for (const Device& d : h.view->devices) {
        if (d.process_index() == p) {
          firsts.push_back(d.id());
          break;
        }
      }
    }
    if (firsts.size() != key.size()) {
      throw InvalidArgument("process_communicator: a listed process does not exist");
    }
    group = ProcessGroup::create(firsts, group_id_for(firsts, ~1ull), h);
  }
  return Communicator(group, 0);
}

std::vector<Communicator> make_communicators(std::span<const int> device_ids) {
  auto group = ProcessGroup::create(device_ids, next_id(device_ids), comm_handles());
  std::vector<Communicator> out;
  for (size_t i = 0; i < group->layout().local_ranks.size(); ++i) {
    out.emplace_back(group, static_cast<int>(i));
  }
  return out;
}

}  // namespace spmd
