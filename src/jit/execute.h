// Runs a per-device program (local_program.h) on one device's input blocks. Called on the
// device's own thread inside its axis context (executable.h), where the named collectives reach
// the other devices of the mesh; every device of the mesh runs it at once. Every kernel is
// reached through `device.backend` (the device seam, kernels/backend.h).
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "jit/local_program.h"
#include "jit/operation.h"
#include "spmd/block.h"

namespace spmd::compiler {

// The blocks of the steps that give the same block at every call (Operation::
// same_at_every_call: full, iota, constant), up to kKeptBytes each, made at a device's first call
// and shared by its later ones, so that a train step's constants cost no launch and no
// allocation after the first (copy on write keeps a shared block unchanged). One per device of
// an executable's session; thread-safe.
class KeptSteps {
 public:
  static constexpr size_t kKeptBytes = size_t{1} << 20;
  // Step `step`'s block when one was kept in `memory`.
  std::optional<Block> find(size_t step, MemorySpace memory) const;
  void keep(size_t step, const Block& block);

 private:
  mutable std::mutex mu_;
  std::vector<std::optional<Block>> blocks_;  // by step
};

// The output blocks, one per output of the program. Throws InvalidArgument when an input block
// is not in `device.memory`. With `kept`, constant steps' blocks are taken from it and kept in it.
std::vector<Block> execute(const LocalProgram& local, const KernelContext& device,
                           std::vector<Block>& inputs, KeptSteps* kept = nullptr);

}  // namespace spmd::compiler
