// The mesh in scope (jax.set_mesh, jax.sharding.get_mesh): where one is set, a bare PartitionSpec
// is a sharding on it wherever a sharding is taken (NamedSharding converts from a PartitionSpec),
// and shard_map may leave its mesh out.
//
//   const spmd::Mesh mesh = spmd::make_mesh({2, 4}, {"dp", "mp"});
//   spmd::set_mesh(mesh);                                    // JAX's global setter
//   spmd::Array x = spmd::device_put(host, spmd::P("dp"));   // NamedSharding(mesh, P("dp"))
//   {
//     spmd::MeshScope scope(other);                          // `with jax.set_mesh(other):`
//     …
//   }                                                        // `mesh` again
//
// As JAX's, the mesh in scope is per thread: a thread starts with none. JAX also refuses
// set_mesh inside jit; here a mesh set while tracing is simply in scope for the rest of the trace.
// Thread-safe (each thread its own).
#pragma once

#include <optional>
#include <string_view>

#include "spmd/mesh.h"

namespace spmd {

// Makes `mesh` the mesh in scope on this thread from now on (std::nullopt: none). Throws
// InvalidArgument for a mesh with a kManual axis (JAX: manual axes come from shard_map).
void set_mesh(std::optional<Mesh> mesh);

// `mesh` in scope on this thread while the scope lives, then whatever was before.
class [[nodiscard]] MeshScope {
 public:
  // Throws as set_mesh does.
  explicit MeshScope(Mesh mesh);
  ~MeshScope();
  MeshScope(const MeshScope&) = delete;
  MeshScope& operator=(const MeshScope&) = delete;

 private:
  std::optional<Mesh> previous_;
};

// The mesh in scope on this thread, if any.
std::optional<Mesh> get_mesh();

// The mesh in scope, or InvalidArgument saying that `what` (e.g. "PartitionSpec('x',)") needs
// one and how to give it.
Mesh mesh_in_scope(std::string_view what);

}  // namespace spmd
