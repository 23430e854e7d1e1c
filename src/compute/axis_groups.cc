// Mesh axes to communicators: the groups of a tuple of axes, made once per session.
#include "compute/axis_groups.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "runtime/runtime_state.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

// Calls fn(coords) for every combination of coordinates along `dims` (row-major over `dims` in
// the order given), with the other entries of `coords` left as they are.
template <class Fn>
void for_each_along(const std::vector<int64_t>& sizes, const std::vector<int>& dims,
                    std::vector<int64_t>& coords, Fn&& fn) {
  for (int d : dims) coords[d] = 0;
  while (true) {
    fn(coords);
    int i = static_cast<int>(dims.size()) - 1;
    for (; i >= 0; --i) {
      if (++coords[dims[i]] < sizes[dims[i]]) break;
      coords[dims[i]] = 0;
    }
    if (i < 0) return;
  }
}

int64_t flat_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& coords) {
  int64_t flat = 0;
  for (size_t i = 0; i < sizes.size(); ++i) flat = flat * sizes[i] + coords[i];
  return flat;
}

struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<AxisGroups>> meshes;
};

}  // namespace

AxisGroups::AxisGroups(Mesh mesh) : mesh_(std::move(mesh)) {}

std::vector<int> AxisGroups::dims(const AxisEntry& axes, const std::string& what) const {
  std::vector<int> out;
  for (const auto& name : axes.axes()) {
    const auto& names = mesh_.axis_names();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      throw InvalidArgument(fmt::format("{}: the mesh has no axis '{}'; its axes are '{}'", what,
                                        name, fmt::join(names, "', '")));
    }
    const int d = static_cast<int>(it - names.begin());
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      throw InvalidArgument(fmt::format("{}: axis '{}' is named twice", what, name));
    }
    out.push_back(d);
  }
  return out;
}

int64_t AxisGroups::index(const std::vector<int64_t>& coords, const std::vector<int>& dims) const {
  int64_t index = 0;
  for (int d : dims) index = index * mesh_.axis_sizes()[d] + coords[d];
  return index;
}

int64_t AxisGroups::size(const std::vector<int>& dims) const {
  int64_t n = 1;
  for (int d : dims) n *= mesh_.axis_sizes()[d];
  return n;
}

Communicator AxisGroups::communicator(const std::vector<int>& dims, int device_id) {
  auto find = [&]() -> std::optional<Communicator> {
    std::lock_guard lock(mu_);
    if (closed_) throw FailedPrecondition(*closed_);
    const auto it = made_.find(dims);
    if (it == made_.end()) return std::nullopt;
    const auto handle = it->second.find(device_id);
    if (handle == it->second.end()) {
      throw InvalidArgument(fmt::format("device {} is not one of this process's devices in {}",
                                        device_id, mesh_.to_string()));
    }
    return handle->second;
  };
  if (auto c = find()) return *std::move(c);
  // One creator at a time; close() can still run meanwhile (it takes only mu_).
  std::lock_guard creating(create_mu_);
  if (auto c = find()) return *std::move(c);
  // Every group, in the same order in every process: the other axes' coordinates row-major.
  const auto& sizes = mesh_.axis_sizes();
  std::vector<int> others;
  for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) others.push_back(d);
  }
  const int me = process_index();
  std::map<int, Communicator> handles;
  std::vector<int64_t> outer(sizes.size(), 0);
  for_each_along(sizes, others, outer, [&](std::vector<int64_t>& at) {
    std::vector<int> ids;
    bool mine = false;
    std::vector<int64_t> inner = at;
    for_each_along(sizes, dims, inner, [&](const std::vector<int64_t>& c) {
      const Device& d = mesh_.devices()[flat_of(sizes, c)];
      ids.push_back(d.id());
      mine = mine || d.process_index() == me;
    });
    if (!mine) return;
    for (auto& handle : make_communicators(ids)) handles.emplace(handle.device_id(), handle);
  });
  {
    std::lock_guard lock(mu_);
    made_.emplace(dims, std::move(handles));
  }
  if (auto c = find()) return *std::move(c);
  throw InvalidArgument(fmt::format("device {} is not one of this process's devices in {}",
                                    device_id, mesh_.to_string()));
}

void AxisGroups::close(const std::string& why) {
  std::lock_guard lock(mu_);
  for (auto& [dims, handles] : made_) {
    for (auto& [id, handle] : handles) handle.close(why);
  }
  made_.clear();
  closed_ = why;
}

void AxisGroups::reopen() {
  std::lock_guard lock(mu_);
  closed_.reset();
}

std::shared_ptr<AxisGroups> axis_groups_for(const Mesh& mesh) {
  auto registry = session_object<Registry>();
  std::lock_guard lock(registry->mu);
  for (const auto& groups : registry->meshes) {
    if (groups->mesh() == mesh) return groups;
  }
  registry->meshes.push_back(std::make_shared<AxisGroups>(mesh));
  return registry->meshes.back();
}

}  // namespace spmd
