// One step of Shardy's aggressive factor propagation, the strategy JAX's compiler runs: an
// operation's operands and result seen through its factor rule (a projection), and how far each
// tensor's sharding along each factor grows. propagation.h drives it over a program.
//
// Facts from Shardy's basic_factor_propagation.cc and aggressive_factor_propagation.cc, written
// for whole mesh axes (spmd has no sub-axes):
//   - a factor's candidate axes are the longest list every tensor that may contribute agrees
//     with: the first tensor's axes, grown by each next one while they agree, cut where two
//     differ; with one direction only the source side may grow it, the other side only cuts;
//   - the factors are taken largest source tensor first (then, for element-wise operations,
//     most sharded; then lowest source tensor; then lowest factor);
//   - each tensor takes a factor's candidates where its own axes are a strict prefix of them, cut
//     before an axis its closed dimension lacks or another of its factors holds;
//   - an element-wise operation's operand takes no more along a factor than the result has.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "jit/factor_rule.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// Which side of an operation may give a factor its axes (Shardy's PropagationDirection).
enum class Direction : uint8_t { kNone = 0, kForward = 1, kBackward = 2, kBoth = 3 };

inline Direction operator|(Direction a, Direction b) {
  return static_cast<Direction>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}

// A tensor's sharding along one factor: mesh axis positions, major first; a closed dimension
// takes no more.
struct FactorSharding {
  std::vector<int> axes;
  bool closed = false;
};

// One tensor through the rule: per factor, its sharding along it; none where it lacks the factor.
using TensorFactors = std::vector<std::optional<FactorSharding>>;

struct Projection {
  std::vector<TensorFactors> operands;
  std::vector<TensorFactors> results;
};

// Grows `projection` along every factor of `rule` as Shardy's aggressive strategy does;
// `direction(f)` says which side may give factor f its axes. Returns, operands first and then
// results, which tensors grew.
std::vector<bool> propagate_factors(Projection& projection, const FactorRule& rule,
                                    const std::function<Direction(int)>& direction,
                                    const Mesh& mesh);

}  // namespace spmd::compiler
