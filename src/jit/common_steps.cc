#include "jit/common_steps.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace spmd::compiler {
namespace {

// What two steps must share to compute the same: the operation's name and the step's slots,
// local type, axes and dimensions. Operation::computes_same_as decides the rest.
using StepKey = std::tuple<std::string, std::vector<int>, Shape, DType, std::vector<int>, int, int>;

StepKey key_of(const Step& s) {
  return {s.operation->name(), s.inputs, s.shape, s.dtype, s.axes, s.dim, s.dim2};
}

}  // namespace

void drop_redundant_steps(LocalProgram& local) {
  std::vector<int> same(static_cast<size_t>(local.slots));  // the slot each slot's readers read
  std::iota(same.begin(), same.end(), 0);
  std::map<StepKey, std::vector<const Step*>> earlier;
  std::vector<Step> steps;
  steps.reserve(local.steps.size());  // `earlier` points into it
  for (Step& s : local.steps) {
    for (int& in : s.inputs) in = same[static_cast<size_t>(in)];
    if (s.kind != StepKind::kCompute || s.operation == nullptr) {
      steps.push_back(std::move(s));
      continue;
    }
    if (s.inputs.size() == 1 && s.operation->passes_operand_on()) {
      same[static_cast<size_t>(s.output)] = s.inputs[0];
      continue;
    }
    std::vector<const Step*>& alike = earlier[key_of(s)];
    const auto found = std::find_if(alike.begin(), alike.end(), [&s](const Step* e) {
      return s.operation->computes_same_as(*e->operation);
    });
    if (found != alike.end()) {
      same[static_cast<size_t>(s.output)] = (*found)->output;
      continue;
    }
    steps.push_back(std::move(s));
    alike.push_back(&steps.back());
  }
  for (Edge& out : local.outputs) out.slot = same[static_cast<size_t>(out.slot)];
  local.steps = std::move(steps);
}

}  // namespace spmd::compiler
