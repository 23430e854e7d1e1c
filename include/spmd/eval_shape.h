// spmd::eval_shape — jax.eval_shape: the shapes, dtypes and shardings a function's results would
// have for arguments of given types, found by tracing it once; nothing is compiled or run, and
// no device memory is allocated, so it answers for arrays larger than the machine.
//
//   std::vector<spmd::ShapeDtypeStruct> outs = spmd::eval_shape(
//       [](std::vector<spmd::Tensor>& in) { return std::vector{jnp::sum(in[0], {0})}; },
//       {{{1 << 20, 4096}, spmd::DType::kFloat32}});   // outs[0]: f32[4096]
//
// Each input without a sharding is replicated on the mesh of the inputs that have one, or on
// this process's first device; inputs on different meshes are an InvalidArgument. A result's
// sharding is the one its type holds (Explicit mesh axes; std::nullopt on a mesh of Auto axes,
// as JAX's eval_shape answers). Errors the function raises while tracing propagate.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/sharding.h"
#include "spmd/tensor.h"

namespace spmd {

// A value's type without its data (jax.ShapeDtypeStruct).
struct ShapeDtypeStruct {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::optional<NamedSharding> sharding;
};

// The types of fn's results (see above).
std::vector<ShapeDtypeStruct> eval_shape(
    const std::function<std::vector<Tensor>(std::vector<Tensor>&)>& fn,
    const std::vector<ShapeDtypeStruct>& inputs);

}  // namespace spmd
