#include "kernels/chain_hoist.h"

#include <optional>

#include "kernels/float_arithmetic.h"

namespace spmd::kernels {
namespace {

// Step `s`'s result from its operands' single values, by its own kernel over one element.
void compute_once(const ChainStep& s, std::span<const Input> operands, std::byte* out) {
  switch (s.kind) {
    case ChainStep::Kind::kUnary:
      return unary(static_cast<Unary>(s.fn), s.dtype, operands[0], out, 1);
    case ChainStep::Kind::kBinary:
      return binary(static_cast<Binary>(s.fn), s.dtype, operands[0], operands[1], out, 1);
    case ChainStep::Kind::kSelect:
      return select(s.dtype, operands[0], operands[1], operands[2], out, 1);
    case ChainStep::Kind::kConvert:
      return convert(s.dtype, s.result, operands[0], out, 1);
    case ChainStep::Kind::kMultiplyAdd:
      float_multiply_add(s.fn, s.dtype, operands[0], operands[1], operands[2], out, 1);
      return;
  }
}

// Whether some step before the last reads nothing but scalar inputs: the first step any hoisting
// starts from. Most chains have none, and then nothing is copied.
bool reads_only_scalars(std::span<const ChainStep> steps, std::span<const Input> inputs) {
  for (size_t k = 0; k + 1 < steps.size(); ++k) {
    bool all = true;
    for (int i = 0; i < arity(steps[k].kind); ++i) {
      const int32_t arg = steps[k].args[static_cast<size_t>(i)];
      all = all && arg >= 0 && static_cast<size_t>(arg) < inputs.size() &&
            inputs[static_cast<size_t>(arg)].elements == 1;
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

HoistedChain hoist_uniform_steps(std::span<const ChainStep> steps, std::span<const Input> inputs,
                                 int64_t n) {
  const auto unhoisted = [&] {
    HoistedChain whole;
    whole.steps = steps;
    whole.inputs = inputs;
    return whole;
  };
  if (n <= 1 || steps.size() < 2 || !reads_only_scalars(steps, inputs)) return unhoisted();
  HoistedChain h;
  h.own_inputs.assign(inputs.begin(), inputs.end());
  // Step k's value: a new scalar input where it is hoisted, else its index among the kept steps.
  std::vector<std::optional<int32_t>> hoisted_input(steps.size());
  std::vector<int32_t> kept_index(steps.size(), -1);
  h.values.reserve(steps.size());  // values' addresses go into inputs: no reallocation
  for (size_t k = 0; k < steps.size(); ++k) {
    ChainStep s = steps[k];
    bool uniform = k + 1 < steps.size();
    std::array<Input, 3> operands{};
    for (int i = 0; i < arity(s.kind); ++i) {
      int32_t& arg = s.args[static_cast<size_t>(i)];
      if (arg >= 0) {
        if (static_cast<size_t>(arg) >= inputs.size()) return unhoisted();  // run_chain refuses it
        uniform = uniform && inputs[static_cast<size_t>(arg)].elements == 1;
        operands[static_cast<size_t>(i)] = {inputs[static_cast<size_t>(arg)].data, 1};
        continue;
      }
      const auto earlier = static_cast<size_t>(-1 - arg);
      if (earlier >= k) return unhoisted();
      if (hoisted_input[earlier]) {
        arg = *hoisted_input[earlier];
        operands[static_cast<size_t>(i)] = h.own_inputs[static_cast<size_t>(arg)];
      } else {
        uniform = false;
        arg = chain_result(kept_index[earlier]);
      }
    }
    if (uniform) {
      h.values.emplace_back();
      compute_once(s, operands, h.values.back().bytes.data());
      hoisted_input[k] = static_cast<int32_t>(h.own_inputs.size());
      h.own_inputs.push_back({h.values.back().bytes.data(), 1});
      ++h.hoisted;
    } else {
      kept_index[k] = static_cast<int32_t>(h.own_steps.size());
      h.own_steps.push_back(s);
    }
  }
  h.steps = h.own_steps;
  h.inputs = h.own_inputs;
  return h;
}

}  // namespace spmd::kernels
