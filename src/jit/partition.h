// The partitioner: gives every value of a traced program a layout over the mesh by forward
// propagation (the rules jit.h states) and emits the per-device program, with the collectives
// that move values between the layouts their uses need.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jit/layout.h"
#include "jit/local_program.h"
#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// `in_layouts`: one per parameter; `out_layouts`: one per output, nullopt for the propagated
// layout. Throws IndivisibleError for an uneven split, InvalidArgument for a layout naming a
// mesh axis twice.
LocalProgram partition(const Program& program, const Mesh& mesh,
                       const std::vector<Layout>& in_layouts,
                       const std::vector<std::optional<Layout>>& out_layouts,
                       const std::string& name);

}  // namespace spmd::compiler
