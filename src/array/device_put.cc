// spmd::device_put: placing host data, and resharding arrays by moving only what each device
// lacks (reshard_plan.h), across processes with one all_to_all_v.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "array/box_copy.h"
#include "array/reshard_plan.h"
#include "spmd/array.h"
#include "spmd/communicator.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

// Rows at least this long travel as pieces of their own, straight between shards; shorter ones
// are packed, where a message per row would cost more than the copy it saves.
constexpr size_t kDirectRunBytes = size_t{4} << 10;

// `box` relative to the shard at `shard`.
std::vector<int64_t> offset_in(const Index& box, const Index& shard) {
  std::vector<int64_t> s;
  for (size_t d = 0; d < box.size(); ++d) s.push_back(box[d].start - shard[d].start);
  return s;
}

}  // namespace

void check_cluster_devices(const Sharding& sharding) {
  // Every reshard runs this, so it copies no cluster-wide list: ids against the count, and this
  // process's own devices (a handful) against what it holds now.
  const int count = device_count();
  const int me = process_index();
  std::optional<std::vector<Device>> mine;
  for (const Device& d : sharding.device_assignment()) {
    bool known = d.id() >= 0 && d.id() < count && d.process_index() < process_count();
    if (known && d.process_index() == me) {
      if (!mine) mine = local_devices();
      known = std::any_of(mine->begin(), mine->end(), [&](const Device& m) {
        return m.id() == d.id() && m.host_id() == d.host_id();
      });
    }
    if (known) continue;
    throw InvalidArgument(fmt::format(
        "device_put onto {}: {} is not a device of this cluster, which has {} devices (the mesh "
        "was made before the last initialize()?); make the mesh again with make_mesh",
        sharding.to_string(), d.to_string(), count));
  }
}

void check_even_split(const Shape& shape, const Sharding& sharding) {
  try {
    sharding.shard_shape(shape);
  } catch (const IndivisibleError& e) {
    throw IndivisibleError(
        fmt::format("device_put of an array of shape ({}): {}", fmt::join(shape, ", "), e.what()));
  }
}

Array device_put(const HostArray& host, const Sharding& sharding) {
  check_cluster_devices(sharding);
  std::vector<Shard> shards;
  const int me = process_index();
  for (DeviceIndex& e : sharding.devices_indices_map(host.shape())) {
    if (e.device.process_index() != me) continue;
    HostArray data = host.slice(e.index);
    shards.push_back({e.device, std::move(e.index), e.replica_id, std::move(data)});
  }
  return Array(host.shape(), host.dtype(), sharding.clone(), std::move(shards), me);
}

namespace {

// One reshard of `x` onto a new sharding, as this process takes part in it, in steps (run()):
// agree on the dtype with the other processes involved, copy what stays within this process,
// then move the rest in one all_to_all_segments, in plan order, which every process computes
// alike. A remote part travels once per destination process (several local devices needing it —
// replicas — copy it from the first that received it). A part whose rows (runs along the last
// dimension) are long goes straight from the source shard into the destination shard, row by
// row; short-rowed parts are packed into one contiguous piece and unpacked on arrival.
class Resharder {
 public:
  Resharder(const Array& x, const Sharding& sharding)
      : x_(x),
        sharding_(sharding),
        from_(x.sharding().devices_indices_map(x.shape())),
        to_(sharding.devices_indices_map(x.shape())),
        me_(process_index()) {}

  Array run() {
    const Shape& shape = x_.shape();
    std::set<int> involved;
    for (const DeviceIndex& e : from_) involved.insert(e.device.process_index());
    for (const DeviceIndex& e : to_) involved.insert(e.device.process_index());
    if (!involved.contains(me_)) return Array(shape, x_.dtype(), sharding_.clone(), {}, me_);
    processes_.assign(involved.begin(), involved.end());
    dtype_ = agreed_dtype();
    elem_ = dtype_size(dtype_);
    make_new_shards();
    plan_ = plan_reshard(from_, to_);
    copy_local_parts();
    if (processes_.size() > 1) {
      post_messages();
      process_communicator(processes_).all_to_all_segments(sends_, recvs_);
      unpack();
      copy_to_replicas();
    }
    return Array(shape, dtype_, sharding_.clone(), std::move(shards_), me_);
  }

 private:
  struct Packed {
    const Transfer* transfer;
    size_t offset;  // into staging_
  };

  // A process holding no shard of `x` cannot know its dtype: take the holders', and refuse
  // holders that disagree (their bytes would be misread).
  DType agreed_dtype() const {
    if (processes_.size() == 1) return x_.dtype();
    Communicator comm = process_communicator(processes_);
    const int32_t mine[2] = {static_cast<int32_t>(x_.dtype()),
                             x_.addressable_shards().empty() ? 0 : 1};
    std::vector<int32_t> all(2 * processes_.size());
    comm.all_gather(std::span<const int32_t>(mine, 2), all);
    std::optional<DType> agreed;
    for (size_t r = 0; r < processes_.size(); ++r) {
      if (all[2 * r + 1] == 0) continue;
      const auto d = static_cast<DType>(all[2 * r]);
      if (agreed && *agreed != d) {
        throw InvalidArgument(fmt::format(
            "device_put: process {} holds {} shards of this array but process {} holds {}",
            processes_[r], dtype_name(d), me_, dtype_name(*agreed)));
      }
      agreed = d;
    }
    return agreed.value_or(x_.dtype());
  }

  // The new shards of this process's devices, allocated, and where the current ones are.
  void make_new_shards() {
    for (const DeviceIndex& e : to_) {
      if (e.device.process_index() != me_) continue;
      shard_of_[e.device.id()] = shards_.size();
      shards_.push_back({e.device, e.index, e.replica_id,
                         HostArray::uninitialized(dtype_, index_extents(e.index))});
    }
    for (const Shard& s : x_.addressable_shards()) held_[s.device.id()] = &s;
  }

  Shard& new_shard(const Device& d) { return shards_[shard_of_.at(d.id())]; }

  size_t rank_of(int process) const {
    return static_cast<size_t>(std::lower_bound(processes_.begin(), processes_.end(), process) -
                               processes_.begin());
  }

  void copy_local_parts() {
    for (const Transfer& t : plan_) {
      if (t.source.process_index() != me_ || t.destination.process_index() != me_) continue;
      const Shard& from = *held_.at(t.source.id());
      Shard& to = new_shard(t.destination);
      copy_box(from.data.bytes().data(), from.data.shape(), offset_in(t.box, from.index),
               to.data.mutable_bytes().data(), to.data.shape(), offset_in(t.box, to.index),
               index_extents(t.box), elem_);
    }
  }

  // Whether transfer `t` is this process's to send or receive: it crosses processes, touches
  // this one, and is the first of its kind (each part goes once to each destination process).
  bool is_mine(const Transfer& t) {
    const int src = t.source.process_index();
    const int dst = t.destination.process_index();
    if (src == dst || (src != me_ && dst != me_)) return false;
    const std::string box = index_to_string(t.box);
    if (src == me_) return sent_.insert({t.source.id(), dst, box}).second;
    return first_received_.emplace(std::make_tuple(t.source.id(), box), &t).second;
  }

  bool short_rows(const Index& box) const {
    return static_cast<size_t>(box.back().stop - box.back().start) * elem_ < kDirectRunBytes;
  }

  // Sizes the packed pieces first, so that staging is allocated once, then posts every send and
  // receive.
  void post_messages() {
    size_t staging_bytes = 0;
    for (const Transfer& t : plan_) {
      if (!is_mine(t) || (!t.box.empty() && !short_rows(t.box))) continue;
      (t.source.process_index() == me_ ? packed_out_ : packed_in_).push_back({&t, staging_bytes});
      staging_bytes += static_cast<size_t>(shape_size(index_extents(t.box))) * elem_;
    }
    staging_ = detail::Bytes(staging_bytes);
    sends_.resize(processes_.size());
    recvs_.resize(processes_.size());
    sent_.clear();
    first_received_.clear();
    size_t next_out = 0;
    size_t next_in = 0;
    for (const Transfer& t : plan_) {
      if (!is_mine(t)) continue;
      if (t.source.process_index() == me_) {
        post_send(t, next_out);
      } else {
        post_recv(t, next_in);
      }
    }
  }

  void post_send(const Transfer& t, size_t& next_packed) {
    const Shape extent = index_extents(t.box);
    const Shard& from = *held_.at(t.source.id());
    const std::byte* base = from.data.bytes().data();
    auto& out = sends_[rank_of(t.destination.process_index())];
    if (next_packed < packed_out_.size() && packed_out_[next_packed].transfer == &t) {
      std::byte* at = staging_.data() + packed_out_[next_packed++].offset;
      copy_box(base, from.data.shape(), offset_in(t.box, from.index), at, extent,
               std::vector<int64_t>(extent.size(), 0), extent, elem_);
      out.push_back({at, static_cast<size_t>(shape_size(extent)) * elem_});
      return;
    }
    for_each_run(from.data.shape(), offset_in(t.box, from.index), extent, elem_,
                 [&](size_t offset, size_t bytes) {
                   out.push_back({base + offset, bytes});
                 });
  }

  void post_recv(const Transfer& t, size_t& next_packed) {
    const Shape extent = index_extents(t.box);
    Shard& to = new_shard(t.destination);
    std::byte* base = to.data.mutable_bytes().data();
    auto& in = recvs_[rank_of(t.source.process_index())];
    if (next_packed < packed_in_.size() && packed_in_[next_packed].transfer == &t) {
      in.push_back({staging_.data() + packed_in_[next_packed++].offset,
                    static_cast<size_t>(shape_size(extent)) * elem_});
      return;
    }
    for_each_run(to.data.shape(), offset_in(t.box, to.index), extent, elem_,
                 [&](size_t offset, size_t bytes) {
                   in.push_back({base + offset, bytes});
                 });
  }

  void unpack() {
    for (const Packed& p : packed_in_) {
      const Transfer& t = *p.transfer;
      Shard& to = new_shard(t.destination);
      const Shape extent = index_extents(t.box);
      copy_box(staging_.data() + p.offset, extent, std::vector<int64_t>(extent.size(), 0),
               to.data.mutable_bytes().data(), to.data.shape(), offset_in(t.box, to.index), extent,
               elem_);
    }
  }

  // Replicas get their copy of what the first of them received.
  void copy_to_replicas() {
    for (const Transfer& t : plan_) {
      if (t.destination.process_index() != me_ || t.source.process_index() == me_) continue;
      const Transfer* first = first_received_.at({t.source.id(), index_to_string(t.box)});
      if (first == &t) continue;
      const Shard& have = new_shard(first->destination);
      Shard& want = new_shard(t.destination);
      copy_box(have.data.bytes().data(), have.data.shape(), offset_in(t.box, have.index),
               want.data.mutable_bytes().data(), want.data.shape(), offset_in(t.box, want.index),
               index_extents(t.box), elem_);
    }
  }

  const Array& x_;
  const Sharding& sharding_;
  const std::vector<DeviceIndex> from_;
  const std::vector<DeviceIndex> to_;
  const int me_;
  std::vector<int> processes_;  // involved in the reshard, ascending
  DType dtype_ = DType::kFloat32;
  size_t elem_ = 0;
  std::vector<Shard> shards_;         // the new shards of this process's devices
  std::map<int, size_t> shard_of_;    // device id -> index in shards_
  std::map<int, const Shard*> held_;  // device id -> this process's current shard
  std::vector<Transfer> plan_;
  std::set<std::tuple<int, int, std::string>> sent_;  // (source, destination process, box)
  std::map<std::tuple<int, std::string>, const Transfer*> first_received_;  // (source, box)
  std::vector<Packed> packed_out_;
  std::vector<Packed> packed_in_;
  detail::Bytes staging_{0};
  std::vector<std::vector<ConstSegment>> sends_;
  std::vector<std::vector<MutableSegment>> recvs_;
};

}  // namespace

Array device_put(const Array& x, const Sharding& sharding) {
  check_cluster_devices(sharding);
  return Resharder(x, sharding).run();
}

Array device_put(const Array& x, const NamedSharding& sharding) {
  return device_put(x, static_cast<const Sharding&>(sharding));
}

Array device_put(const HostArray& host, const NamedSharding& sharding) {
  return device_put(host, static_cast<const Sharding&>(sharding));
}

}  // namespace spmd
