#include "spmd/mesh.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "spmd/error.h"
#include "spmd/shape.h"

namespace spmd {

Mesh::Mesh(const std::vector<Device>& devices, std::vector<std::string> axis_names)
    : Mesh(devices, {static_cast<int64_t>(devices.size())}, std::move(axis_names)) {}

std::string_view axis_type_name(AxisType type) {
  switch (type) {
    case AxisType::kExplicit:
      return "Explicit";
    case AxisType::kManual:
      return "Manual";
    default:
      return "Auto";
  }
}

Mesh::Mesh(std::vector<Device> devices, std::vector<int64_t> shape,
           std::vector<std::string> axis_names)
    : Mesh(std::move(devices), std::move(shape), std::move(axis_names), {}) {}

Mesh::Mesh(std::vector<Device> devices, std::vector<int64_t> shape,
           std::vector<std::string> axis_names, std::vector<AxisType> axis_types)
    : devices_(std::move(devices)),
      sizes_(std::move(shape)),
      axis_names_(std::move(axis_names)),
      axis_types_(std::move(axis_types)) {
  if (axis_types_.empty()) axis_types_.assign(axis_names_.size(), AxisType::kAuto);
  if (axis_types_.size() != axis_names_.size()) {
    std::vector<std::string_view> types;
    for (AxisType t : axis_types_) types.push_back(axis_type_name(t));
    throw InvalidArgument(fmt::format(
        "a mesh needs one axis type per axis name: got axis names ({}) and axis types ({})",
        fmt::join(axis_names_, ", "), fmt::join(types, ", ")));
  }
  if (sizes_.size() != axis_names_.size()) {
    throw InvalidArgument(fmt::format("a mesh of shape ({}) needs {} axis names, got {} ({})",
                                      fmt::join(sizes_, ", "), sizes_.size(), axis_names_.size(),
                                      fmt::join(axis_names_, ", ")));
  }
  for (int64_t s : sizes_) {
    if (s <= 0) {
      throw InvalidArgument(
          fmt::format("mesh axis sizes must be positive, got ({})", fmt::join(sizes_, ", ")));
    }
  }
  const int64_t product = shape_size(sizes_);  // InvalidArgument beyond int64, not a wrap
  if (product != static_cast<int64_t>(devices_.size())) {
    throw InvalidArgument(fmt::format("a mesh of shape ({}) holds {} devices, but {} were given",
                                      fmt::join(sizes_, ", "), product, devices_.size()));
  }
  std::set<std::string> names;
  for (const auto& n : axis_names_) {
    if (n.empty() || !names.insert(n).second) {
      throw InvalidArgument(fmt::format("mesh axis names must be non-empty and distinct, got ({})",
                                        fmt::join(axis_names_, ", ")));
    }
  }
  std::set<int> ids;
  for (const auto& d : devices_) {
    if (!ids.insert(d.id()).second) {
      throw InvalidArgument(fmt::format("device {} appears twice in the mesh", d.id()));
    }
  }
}

std::vector<std::pair<std::string, int64_t>> Mesh::shape() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t i = 0; i < sizes_.size(); ++i) out.emplace_back(axis_names_[i], sizes_[i]);
  return out;
}

int Mesh::axis_index(const std::string& axis) const {
  auto it = std::find(axis_names_.begin(), axis_names_.end(), axis);
  if (it == axis_names_.end()) {
    throw InvalidArgument(fmt::format("the mesh has no axis '{}'; its axes are ({})", axis,
                                      fmt::join(axis_names_, ", ")));
  }
  return static_cast<int>(it - axis_names_.begin());
}

std::vector<int64_t> Mesh::coordinates(int64_t flat) const {
  std::vector<int64_t> c(sizes_.size());
  for (size_t i = sizes_.size(); i-- > 0;) {
    c[i] = flat % sizes_[i];
    flat /= sizes_[i];
  }
  return c;
}

std::vector<Device> Mesh::local_devices(int process_index) const {
  std::vector<Device> out;
  for (const auto& d : devices_) {
    if (d.process_index() == process_index) out.push_back(d);
  }
  return out;
}

Mesh Mesh::local_mesh(int process_index) const {
  // The bounding box of the process's devices must hold nothing else.
  const size_t rank = sizes_.size();
  std::vector<int64_t> lo(rank, INT64_MAX);
  std::vector<int64_t> hi(rank, -1);
  int64_t local = 0;
  for (int64_t f = 0; f < size(); ++f) {
    if (devices_[f].process_index() != process_index) continue;
    ++local;
    const auto c = coordinates(f);
    for (size_t i = 0; i < rank; ++i) {
      lo[i] = std::min(lo[i], c[i]);
      hi[i] = std::max(hi[i], c[i]);
    }
  }
  if (local == 0) {
    throw InvalidArgument(
        fmt::format("process {} has no devices in {}", process_index, to_string()));
  }
  std::vector<int64_t> shape(rank);
  int64_t box = 1;
  for (size_t i = 0; i < rank; ++i) {
    shape[i] = hi[i] - lo[i] + 1;
    box *= shape[i];
  }
  if (box != local) {
    throw InvalidArgument(fmt::format(
        "process {}'s devices do not form one contiguous block of {}: devices of one process "
        "must be neighbours along every axis (see mesh_utils::create_hybrid_device_mesh)",
        process_index, to_string()));
  }
  std::vector<Device> sub;
  for (int64_t f = 0; f < size(); ++f) {
    if (devices_[f].process_index() == process_index) sub.push_back(devices_[f]);
  }
  return Mesh(std::move(sub), std::move(shape), axis_names_, axis_types_);
}

bool Mesh::operator==(const Mesh& other) const {
  return sizes_ == other.sizes_ && axis_names_ == other.axis_names_ &&
         axis_types_ == other.axis_types_ && devices_ == other.devices_;
}

std::string Mesh::to_string() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    parts.push_back(fmt::format("'{}': {}", axis_names_[i], sizes_[i]));
  }
  if (std::any_of(axis_types_.begin(), axis_types_.end(),
                  [](AxisType t) { return t != AxisType::kAuto; })) {
    std::vector<std::string_view> types;
    for (AxisType t : axis_types_) types.push_back(axis_type_name(t));
    parts.push_back(fmt::format("axis_types=({}{})", fmt::join(types, ", "),
                                types.size() == 1 ? "," : ""));  // a Python tuple's text
  }
  return fmt::format("Mesh({})", fmt::join(parts, ", "));
}

}  // namespace spmd
