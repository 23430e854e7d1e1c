// The check that every process of a mesh traced the same program (jit.h, "The same program
// everywhere"): one all_gather of 64-bit fingerprints over the mesh; on a difference, the two
// programs' text through the coordination service, to name the first operation that differs.
#pragma once

#include <string>

#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// Collective over the processes owning devices of `mesh`. Throws CollectiveMismatch in every
// process when the fingerprints differ, naming two processes and the first operation where
// their programs do.
void check_same_program(const Program& program, const Mesh& mesh, const std::string& name);

}  // namespace spmd::compiler
