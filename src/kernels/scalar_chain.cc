#include "kernels/scalar_chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <vector>

#include "spmd/error.h"

namespace spmd::kernels {
namespace {

// Refuses what elementwise.h or this program would not compute; fixes each input's dtype from
// the steps that read it (a select's condition: bool).
void check_and_type(std::span<const ChainStep> steps, ScalarChain& p) {
  std::fill(std::begin(p.input_dtype), std::end(p.input_dtype), DType::kFloat32);
  for (size_t k = 0; k < steps.size(); ++k) {
    const ChainStep& s = steps[k];
    const auto refuse = [&](std::string_view what) {
      throw InvalidArgument(
          fmt::format("element-wise chain: step {} ({}) {}", k, dtype_name(s.dtype), what));
    };
    if (!scalar::computes_in(s.dtype) || !scalar::computes_in(s.result)) {
      refuse("is uint64, which GPUs do not compute in yet");
    }
    if (s.kind == ChainStep::Kind::kUnary && !scalar::defined(static_cast<Unary>(s.fn), s.dtype)) {
      refuse(fmt::format("applies {}, which is not defined on it", name(static_cast<Unary>(s.fn))));
    }
    if (s.kind == ChainStep::Kind::kMultiplyAdd && s.dtype != DType::kFloat32 &&
        s.dtype != DType::kFloat64) {
      refuse("is a fused multiply-add, which computes in float32 or float64 only");
    }
    if (s.kind == ChainStep::Kind::kBinary &&
        !scalar::defined(static_cast<Binary>(s.fn), s.dtype)) {
      refuse(
          fmt::format("applies {}, which is not defined on it", name(static_cast<Binary>(s.fn))));
    }
    for (int a = 0; a < arity(s.kind); ++a) {
      const int32_t arg = s.args[static_cast<size_t>(a)];
      if (arg < 0 && -1 - arg >= static_cast<int32_t>(k)) refuse("reads a step not yet run");
      if (arg >= p.inputs) refuse(fmt::format("reads input {} of {}", arg, p.inputs));
      if (arg < 0) continue;
      const bool condition = s.kind == ChainStep::Kind::kSelect && a == 0;
      p.input_dtype[arg] = condition ? DType::kBool : s.dtype;
    }
  }
}

// Moves the steps before the last that read only scalar inputs and each other into p's
// prologue (scalar_chain.h), renumbering every operand, if the other steps read at most
// kMaxHoistedValues of their values; else leaves p as it is. `steps` are checked.
void split_prologue(std::span<const ChainStep> steps, ScalarChain& p) {
  const size_t count = steps.size();
  std::vector<bool> uniform(count, false);
  for (size_t k = 0; k + 1 < count; ++k) {
    bool all = true;
    for (int a = 0; a < arity(steps[k].kind); ++a) {
      const int32_t arg = steps[k].args[static_cast<size_t>(a)];
      all = all && (arg >= 0 ? p.input_elements[arg] == 1 : uniform[static_cast<size_t>(-1 - arg)]);
    }
    uniform[k] = all;
  }
  // Each step's index in its own list; each prologue step's hoisted index, if the rest reads it.
  std::vector<int32_t> index(count), hoisted(count, -1);
  int32_t prologue = 0, rest = 0, read = 0;
  for (size_t k = 0; k < count; ++k) index[k] = uniform[k] ? prologue++ : rest++;
  if (prologue == 0) return;
  for (size_t k = 0; k < count; ++k) {
    if (uniform[k]) continue;
    for (int a = 0; a < arity(steps[k].kind); ++a) {
      const int32_t arg = steps[k].args[static_cast<size_t>(a)];
      if (arg < 0 && uniform[static_cast<size_t>(-1 - arg)] &&
          hoisted[static_cast<size_t>(-1 - arg)] < 0) {
        if (read == kMaxHoistedValues) return;
        hoisted[static_cast<size_t>(-1 - arg)] = read++;
      }
    }
  }
  p.prologue = prologue;
  p.steps = rest;
  p.hoisted = read;
  for (size_t k = 0; k < count; ++k) {
    ChainStep s = steps[k];
    for (int a = 0; a < arity(s.kind); ++a) {
      int32_t& arg = s.args[static_cast<size_t>(a)];
      if (arg >= 0) continue;
      const auto from = static_cast<size_t>(-1 - arg);
      arg = !uniform[k] && uniform[from] ? p.inputs + hoisted[from] : chain_result(index[from]);
    }
    p.step[uniform[k] ? rest + index[k] : index[k]] = s;
    if (uniform[k] && hoisted[k] >= 0) p.hoisted_from[hoisted[k]] = static_cast<int8_t>(index[k]);
  }
}

}  // namespace

ScalarChain make_scalar_chain(std::span<const ChainStep> steps, std::span<const Input> inputs,
                              std::byte* out, int64_t n) {
  if (steps.empty() || steps.size() > kMaxScalarChainSteps ||
      inputs.size() > kMaxScalarChainInputs) {
    throw InvalidArgument(fmt::format(
        "element-wise chain: {} steps and {} inputs; one program takes 1 to {} steps and at most "
        "{} inputs",
        steps.size(), inputs.size(), kMaxScalarChainSteps, kMaxScalarChainInputs));
  }
  ScalarChain p;
  p.steps = static_cast<int32_t>(steps.size());
  p.inputs = static_cast<int32_t>(inputs.size());
  std::copy(steps.begin(), steps.end(), p.step);
  for (size_t i = 0; i < inputs.size(); ++i) {
    p.input[i] = inputs[i].data;
    p.input_elements[i] = inputs[i].elements;
  }
  check_and_type(steps, p);
  if (n > 1) split_prologue(steps, p);
  p.out = out;
  p.n = n;
  return p;
}

}  // namespace spmd::kernels
