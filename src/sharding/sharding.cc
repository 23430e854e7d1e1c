// What every sharding shares: addressability, replica ids, index printing.
#include "spmd/sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "sharding/tiling.h"

namespace spmd {

std::string index_to_string(const Index& index) {
  std::vector<std::string> parts;
  for (const auto& s : index) parts.push_back(fmt::format("{}:{}", s.start, s.stop));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

Shape reshaped(const Shape& from, Shape to) {
  const int64_t size = shape_size(from);
  int inferred = -1;
  int64_t known = 1;
  bool valid = true;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else if (to[i] < 0) {
      valid = false;
    } else {
      known *= to[i];
    }
  }
  if (valid && inferred >= 0 && known > 0 && size % known == 0) to[inferred] = size / known;
  if (!valid || shape_size(to) != size || (inferred >= 0 && known == 0)) {
    throw InvalidArgument(fmt::format("cannot reshape ({}) of {} elements to ({})",
                                      fmt::join(from, ", "), size, fmt::join(to, ", ")));
  }
  return to;
}

Shape index_extents(const Index& index) {
  Shape s;
  s.reserve(index.size());
  for (const auto& slice : index) s.push_back(slice.size());
  return s;
}

void assign_replica_ids(std::vector<DeviceIndex>& map) {
  std::map<Index, int> seen;
  for (auto& entry : map) entry.replica_id = seen[entry.index]++;
}

std::vector<Device> Sharding::addressable_devices(int process_index) const {
  std::vector<Device> out;
  for (const auto& d : device_assignment()) {
    if (d.process_index() == process_index) out.push_back(d);
  }
  return out;
}

bool Sharding::is_fully_addressable(int process_index) const {
  for (const auto& d : device_assignment()) {
    if (d.process_index() != process_index) return false;
  }
  return true;
}

}  // namespace spmd
