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
  for (Shard& shard : shards)
    shard.data = HostArray::uninitialized(dtype, index_extents(shard.index));
  auto rank_of = [&](int process) {
    return static_cast<size_t>(std::lower_bound(processes.begin(), processes.end(), process) -
                               processes.begin());
  };

  // Local parts copy now. Remote ones travel once per destination process (several local
  // devices needing the same part — replicas — copy it from the first that received it), in plan
  // order, which every process computes alike. A part whose rows (runs along the last dimension)
  // are long goes straight from the source shard into the destination shard, row by row;
  // short-rowed parts are packed into one contiguous piece and unpacked on arrival.
  const std::vector<Transfer> plan = plan_reshard(from, to);
  for (const Transfer& t : plan) {
    if (t.source.process_index() != me || t.destination.process_index() != me) continue;
    const Shard& from_shard = *held.at(t.source.id());
    Shard& to_shard = shards[shard_of.at(t.destination.id())];
    copy_box(from_shard.data.bytes().data(), from_shard.data.shape(),
             offset_in(t.box, from_shard.index), to_shard.data.mutable_bytes().data(),
             to_shard.data.shape(), offset_in(t.box, to_shard.index), index_extents(t.box), elem);
  }
  if (processes.size() == 1) return Array(shape, dtype, sharding.clone(), std::move(shards), me);

  struct Packed {
    const Transfer* transfer;
    size_t offset;  // into `staging`
  };
  std::set<std::tuple<int, int, std::string>> sent;  // (source, destination process, box)
  std::map<std::tuple<int, std::string>, const Transfer*> first_received;  // (source, box)
  std::vector<std::vector<ConstSegment>> sends(processes.size());
  std::vector<std::vector<MutableSegment>> recvs(processes.size());
  std::vector<Packed> packed_out;
  std::vector<Packed> packed_in;
  size_t staging_bytes = 0;
  // First pass: sizes of the packed pieces, so that staging is allocated once.
  auto short_rows = [&](const Index& box) {
    return static_cast<size_t>(box.back().stop - box.back().start) * elem < kDirectRunBytes;
  };
  for (const Transfer& t : plan) {
    const int src = t.source.process_index();
    const int dst = t.destination.process_index();
    if (src == dst || (src != me && dst != me)) continue;
    const std::string box = index_to_string(t.box);
    if (src == me && !sent.insert({t.source.id(), dst, box}).second) continue;
    if (dst == me && !first_received.emplace(std::make_tuple(t.source.id(), box), &t).second) {
      continue;
    }
    if (!t.box.empty() && !short_rows(t.box)) continue;
    (src == me ? packed_out : packed_in).push_back({&t, staging_bytes});
    staging_bytes += static_cast<size_t>(shape_size(index_extents(t.box))) * elem;
  }
  detail::Bytes staging(staging_bytes);
  size_t next_out = 0;
  size_t next_in = 0;
  sent.clear();
  first_received.clear();
  for (const Transfer& t : plan) {
    const int src = t.source.process_index();
    const int dst = t.destination.process_index();
    if (src == dst || (src != me && dst != me)) continue;
    const std::string box = index_to_string(t.box);
    const Shape extent = index_extents(t.box);
    if (src == me) {
      if (!sent.insert({t.source.id(), dst, box}).second) continue;
      const Shard& from_shard = *held.at(t.source.id());
      const std::byte* base = from_shard.data.bytes().data();
      if (next_out < packed_out.size() && packed_out[next_out].transfer == &t) {
        std::byte* at = staging.data() + packed_out[next_out++].offset;
        copy_box(base, from_shard.data.shape(), offset_in(t.box, from_shard.index), at, extent,
                 std::vector<int64_t>(extent.size(), 0), extent, elem);
        sends[rank_of(dst)].push_back({at, static_cast<size_t>(shape_size(extent)) * elem});
      } else {
        for_each_run(from_shard.data.shape(), offset_in(t.box, from_shard.index), extent, elem,
                     [&](size_t offset, size_t bytes) {
                       sends[rank_of(dst)].push_back({base + offset, bytes});
                     });
      }
    } else {
      if (!first_received.emplace(std::make_tuple(t.source.id(), box), &t).second) continue;
      Shard& to_shard = shards[shard_of.at(t.destination.id())];
      std::byte* base = to_shard.data.mutable_bytes().data();
      if (next_in < packed_in.size() && packed_in[next_in].transfer == &t) {
        recvs[rank_of(src)].push_back({staging.data() + packed_in[next_in++].offset,
                                       static_cast<size_t>(shape_size(extent)) * elem});
      } else {
        for_each_run(to_shard.data.shape(), offset_in(t.box, to_shard.index), extent, elem,
                     [&](size_t offset, size_t bytes) {
                       recvs[rank_of(src)].push_back({base + offset, bytes});
                     });
      }
    }
  }
  process_communicator(processes).all_to_all_segments(sends, recvs);

  // Unpack the packed pieces; give replicas their copy of what the first of them received.
  for (const Packed& p : packed_in) {
    const Transfer& t = *p.transfer;
    Shard& to_shard = shards[shard_of.at(t.destination.id())];
    const Shape extent = index_extents(t.box);
    copy_box(staging.data() + p.offset, extent, std::vector<int64_t>(extent.size(), 0),
             to_shard.data.mutable_bytes().data(), to_shard.data.shape(),
             offset_in(t.box, to_shard.index), extent, elem);
  }
  for (const Transfer& t : plan) {
    if (t.destination.process_index() != me || t.source.process_index() == me) continue;
    const Transfer* first = first_received.at({t.source.id(), index_to_string(t.box)});
    if (first == &t) continue;
    const Shard& have = shards[shard_of.at(first->destination.id())];
    Shard& want = shards[shard_of.at(t.destination.id())];
    copy_box(have.data.bytes().data(), have.data.shape(), offset_in(t.box, have.index),
             want.data.mutable_bytes().data(), want.data.shape(), offset_in(t.box, want.index),
             index_extents(t.box), elem);
  }
  return Array(shape, dtype, sharding.clone(), std::move(shards), me);
}

}  // namespace spmd
