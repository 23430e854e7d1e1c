// Runs a per-device program (local_program.h) on one device's input blocks. Called on the
// device's own thread inside its axis context (executable.h), where the named collectives reach
// the other devices of the mesh; every device of the mesh runs it at once. Every kernel is
// reached through `device.backend` (the device seam, kernels/backend.h).
#pragma once

#include <vector>

#include "jit/local_program.h"
#include "jit/operation.h"
#include "spmd/block.h"

namespace spmd::compiler {

// The output blocks, one per output of the program. Throws InvalidArgument when an input block
// is not in `device.memory`.
std::vector<Block> execute(const LocalProgram& local, const KernelContext& device,
                           std::vector<Block>& inputs);

}  // namespace spmd::compiler
