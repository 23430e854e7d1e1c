// spmd::device_put: placing host data, and resharding arrays by moving only what each device
// lacks (reshard_plan.h), across processes with one all_to_all_v.
#include <fmt/format.h>

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
#include "spmd/device.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// `box` relative to the shard at `shard`.
std::vector<int64_t> offset_in(const Index& box, const Index& shard) {
  std::vector<int64_t> s;
  for (size_t d = 0; d < box.size(); ++d) s.push_back(box[d].start - shard[d].start);
  return s;
}

}  // namespace

Array device_put(const HostArray& host, const Sharding& sharding) {
  std::vector<Shard> shards;
  const int me = process_index();
  for (DeviceIndex& e : sharding.devices_indices_map(host.shape())) {
    if (e.device.process_index() != me) continue;
    HostArray data = host.slice(e.index);
    shards.push_back({e.device, std::move(e.index), e.replica_id, std::move(data)});
  }
  return Array(host.shape(), host.dtype(), sharding.clone(), std::move(shards), me);
}

Array device_put(const Array& x, const Sharding& sharding) {
  const Shape& shape = x.shape();
  const std::vector<DeviceIndex> from = x.sharding().devices_indices_map(shape);
  const std::vector<DeviceIndex> to = sharding.devices_indices_map(shape);
  const int me = process_index();

  // The new shards of this process's devices, empty for now.
  std::vector<Shard> shards;
  std::map<int, size_t> shard_of;  // device id -> index in shards
  for (const DeviceIndex& e : to) {
    if (e.device.process_index() != me) continue;
    shard_of[e.device.id()] = shards.size();
    shards.push_back({e.device, e.index, e.replica_id, HostArray()});
  }
  std::map<int, const Shard*> held;  // device id -> this process's current shard
  for (const Shard& s : x.addressable_shards()) held[s.device.id()] = &s;

  std::set<int> involved;
  for (const DeviceIndex& e : from) involved.insert(e.device.process_index());
  for (const DeviceIndex& e : to) involved.insert(e.device.process_index());
  if (!involved.contains(me)) return Array(shape, x.dtype(), sharding.clone(), {}, me);
  const std::vector<int> processes(involved.begin(), involved.end());
  // A process holding no shard of `x` cannot know its dtype: take the holders', and refuse
  // holders that disagree (their bytes would be misread).
  DType dtype = x.dtype();
  if (processes.size() > 1) {
    Communicator comm = process_communicator(processes);
    const int32_t mine[2] = {static_cast<int32_t>(x.dtype()),
                             x.addressable_shards().empty() ? 0 : 1};
    std::vector<int32_t> all(2 * processes.size());
    comm.all_gather(std::span<const int32_t>(mine, 2), all);
    std::optional<DType> agreed;
    for (size_t r = 0; r < processes.size(); ++r) {
      if (all[2 * r + 1] == 0) continue;
      const auto d = static_cast<DType>(all[2 * r]);
      if (agreed && *agreed != d) {
        throw InvalidArgument(fmt::format(
            "device_put: process {} holds {} shards of this array but process {} holds {}",
            processes[r], dtype_name(d), me, dtype_name(*agreed)));
      }
      agreed = d;
    }
    if (agreed) dtype = *agreed;
  }
  const size_t elem = dtype_size(dtype);
  for (Shard& shard : shards) shard.data = HostArray::zeros(dtype, index_extents(shard.index));
  auto rank_of = [&](int process) {
    return static_cast<size_t>(std::lower_bound(processes.begin(), processes.end(), process) -
                               processes.begin());
  };

  // Local parts copy now. Remote ones travel once per destination process — several local
  // devices needing the same part (replicas) copy it from the one received — packed per
  // destination process in plan order, which every process computes alike.
  const std::vector<Transfer> plan = plan_reshard(from, to);
  struct Wire {
    const Transfer* transfer;
    size_t offset;  // in the sender's buffer for, or the receiver's buffer from, the peer
  };
  std::map<std::tuple<int, int, std::string>, Wire> wires;  // (source, dst process, box)
  std::vector<size_t> send_bytes(processes.size(), 0);
  std::vector<size_t> recv_bytes(processes.size(), 0);
  std::vector<const Transfer*> order;  // the wire transfers, in plan order
  for (const Transfer& t : plan) {
    const int src = t.source.process_index();
    const int dst = t.destination.process_index();
    if (src == dst || (src != me && dst != me)) continue;
    auto key = std::make_tuple(t.source.id(), dst, index_to_string(t.box));
    if (wires.contains(key)) continue;
    const size_t bytes = static_cast<size_t>(shape_size(index_extents(t.box))) * elem;
    size_t& total = src == me ? send_bytes[rank_of(dst)] : recv_bytes[rank_of(src)];
    wires.emplace(key, Wire{&t, total});
    total += bytes;
    order.push_back(&t);
  }
  std::vector<size_t> send_at(processes.size(), 0);
  std::vector<size_t> recv_at(processes.size(), 0);
  for (size_t r = 1; r < processes.size(); ++r) {
    send_at[r] = send_at[r - 1] + send_bytes[r - 1];
    recv_at[r] = recv_at[r - 1] + recv_bytes[r - 1];
  }
  std::vector<std::byte> out_buf(send_at.back() + send_bytes.back());
  std::vector<std::byte> in_buf(recv_at.back() + recv_bytes.back());
  for (const Transfer& t : plan) {
    if (t.source.process_index() != me || t.destination.process_index() != me) continue;
    const Shard& from_shard = *held.at(t.source.id());
    Shard& to_shard = shards[shard_of.at(t.destination.id())];
    copy_box(from_shard.data.bytes().data(), from_shard.data.shape(),
             offset_in(t.box, from_shard.index), to_shard.data.mutable_bytes().data(),
             to_shard.data.shape(), offset_in(t.box, to_shard.index), index_extents(t.box), elem);
  }
  for (const Transfer* t : order) {
    if (t->source.process_index() != me) continue;
    const Shard& from_shard = *held.at(t->source.id());
    const Shape extent = index_extents(t->box);
    const int dst = t->destination.process_index();
    const Wire& w = wires.at(std::make_tuple(t->source.id(), dst, index_to_string(t->box)));
    copy_box(from_shard.data.bytes().data(), from_shard.data.shape(),
             offset_in(t->box, from_shard.index), out_buf.data() + send_at[rank_of(dst)] + w.offset,
             extent, std::vector<int64_t>(extent.size(), 0), extent, elem);
  }
  if (processes.size() > 1) {
    Communicator comm = process_communicator(processes);
    comm.all_to_all_v(DType::kUInt8, out_buf.data(), send_bytes, in_buf.data(), recv_bytes);
  }
  for (const Transfer& t : plan) {
    const int src = t.source.process_index();
    if (t.destination.process_index() != me || src == me) continue;
    Shard& to_shard = shards[shard_of.at(t.destination.id())];
    const Shape extent = index_extents(t.box);
    const Wire& w = wires.at(std::make_tuple(t.source.id(), me, index_to_string(t.box)));
    copy_box(in_buf.data() + recv_at[rank_of(src)] + w.offset, extent,
             std::vector<int64_t>(extent.size(), 0), to_shard.data.mutable_bytes().data(),
             to_shard.data.shape(), offset_in(t.box, to_shard.index), extent, elem);
  }
  return Array(shape, dtype, sharding.clone(), std::move(shards), me);
}

}  // namespace spmd
