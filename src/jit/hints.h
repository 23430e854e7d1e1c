// Backward propagation: the layouts out_shardings and with_sharding_constraint ask of values,
// carried back through element-wise operations, broadcasts and transposes, so that a value
// computed from replicated operands is computed at once in the layout its use wants (each device
// its part) instead of whole and then cut. Forward propagation wins where it has a split.
#pragma once

#include <optional>
#include <vector>

#include "jit/layout.h"
#include "jit/program.h"

namespace spmd::compiler {

// One entry per value: the layout asked of it, if any (the outputs' by their own shardings).
std::vector<std::optional<Layout>> backward_hints(const Program& program);

}  // namespace spmd::compiler
