// The partitioner: gives every value of a traced program a layout over the mesh by forward
// propagation (the rules jit.h states) and emits the per-device program, with the collectives
// that move values between the layouts their uses need.
#pragma once

#include <string>

#include "jit/layout.h"
#include "jit/local_program.h"
#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// Each parameter starts in its ParameterOp's sharding; each output leaves in the sharding it
// holds, else in the one jax.jit would give it (propagation.h) where that can be told, else in
// the partitioner's own. `name` is the jitted function's, for the texts. Throws InvalidArgument
// for a layout naming a mesh axis twice, IndivisibleError for a traced shard_map's uneven block.
// With `contract_products` (JitOptions::contract_products), products are contracted as XLA's
// jit contracts them where the mesh's backend says so (contract.h).
LocalProgram partition(const Program& program, const Mesh& mesh, const std::string& name,
                       bool contract_products = true);

}  // namespace spmd::compiler
