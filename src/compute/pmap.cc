// pmap: a shard_map over the 1-D mesh of every device, with each process's values stacked along
// the leading dimension, one per local device.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "spmd/error.h"
#include "spmd/runtime.h"
#include "spmd/shard_map.h"

namespace spmd::detail {

std::vector<HostArray> run_pmap(const std::string& axis_name, const char* program,
                                std::span<const HostArray* const> inputs, const BlockFunction& fn) {
  const int64_t local = local_device_count();
  const Mesh mesh(devices(), {axis_name});
  const NamedSharding rows(mesh, P(axis_name));
  std::vector<Array> globals;
  globals.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const HostArray& x = *inputs[k];
    if (x.shape().empty() || x.shape()[0] != local) {
      throw InvalidArgument(fmt::format(
          "pmap: argument {} is {}[{}], but its leading dimension must be this process's {} "
          "local devices (pmap maps it over them)",
          k, dtype_name(x.dtype()), fmt::join(x.shape(), ", "), local));
    }
    Shape global = x.shape();
    global[0] = device_count();
    globals.push_back(make_array_from_process_local_data(rows, x, global));
  }
  // Each device sees its entry without the leading dimension, and returns one to stack.
  const BlockFunction per_device = [&fn](std::vector<Block>& blocks) {
    for (auto& b : blocks) b = b.reshape(Shape(b.shape().begin() + 1, b.shape().end()));
    std::vector<Block> out = fn(blocks);
    for (auto& b : out) {
      Shape s = b.shape();
      s.insert(s.begin(), 1);
      b = b.reshape(std::move(s));
    }
    return out;
  };
  std::vector<const Array*> pointers;
  pointers.reserve(globals.size());
  for (const auto& g : globals) pointers.push_back(&g);
  const auto outputs =
      run_shard_map(mesh, std::vector<PartitionSpec>(inputs.size(), P(axis_name)), {P(axis_name)},
                    ShardMapOptions{}, program, pointers, per_device);
  std::vector<HostArray> stacked;
  stacked.reserve(outputs.size());
  for (const Array& a : outputs) {
    Shape s = a.shape();
    s[0] = local;
    HostArray h = HostArray::uninitialized(a.dtype(), s);
    size_t at = 0;
    for (const auto& shard : a.addressable_shards()) {
      const auto bytes = shard.data.bytes();
      if (!bytes.empty()) std::memcpy(h.mutable_bytes().data() + at, bytes.data(), bytes.size());
      at += bytes.size();
    }
    stacked.push_back(std::move(h));
  }
  return stacked;
}

}  // namespace spmd::detail
