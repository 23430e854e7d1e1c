// The mesh in scope (mesh_context.h): one per thread.
#include "spmd/mesh_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "spmd/error.h"

namespace spmd {
namespace {

thread_local std::optional<Mesh> mesh_of_thread;

void check_settable(const Mesh& mesh) {
  const auto& types = mesh.axis_types();
  if (std::find(types.begin(), types.end(), AxisType::kManual) != types.end()) {
    throw InvalidArgument(fmt::format(
        "set_mesh: {} has manual axes, which a mesh in scope may not have; per-device code with "
        "manual axes is what shard_map is for",
        mesh.to_string()));
  }
}

}  // namespace

void set_mesh(std::optional<Mesh> mesh) {
  if (mesh) check_settable(*mesh);
  mesh_of_thread = std::move(mesh);
}

MeshScope::MeshScope(Mesh mesh) {
  check_settable(mesh);
  previous_ = std::exchange(mesh_of_thread, std::move(mesh));
}

MeshScope::~MeshScope() { mesh_of_thread = std::move(previous_); }

std::optional<Mesh> get_mesh() { return mesh_of_thread; }

Mesh mesh_in_scope(std::string_view what) {
  if (!mesh_of_thread) {
    throw InvalidArgument(fmt::format(
        "{} is given without a mesh: set one with spmd::set_mesh(mesh) or spmd::MeshScope, or "
        "name it, NamedSharding(mesh, spec)",
        what));
  }
  return *mesh_of_thread;
}

}  // namespace spmd
