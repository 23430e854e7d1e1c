#include "jit/program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include "jit/ops/parameter.h"
#include "jit/sharding_in_types.h"

namespace spmd::compiler {

std::string_view short_dtype_name(DType dtype) {
  constexpr std::string_view names[] = {"bool", "i8",  "i16", "i32",  "i64", "u8", "u16",
                                        "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(dtype)];
}

std::string type_text(DType dtype, const Shape& shape) {
  return fmt::format("{}[{}]", short_dtype_name(dtype), fmt::join(shape, ","));
}

std::string op_name(const Op& op) { return op.operation->name(); }

std::string op_line(const Op& op, int value) {
  // On a mesh with Explicit axes the type shows its splits, as JAX prints it: f32[8@x,16].
  const std::string type =
      op.spec.entries().empty() ? type_text(op.dtype, op.shape) : typed_text(op.type());
  std::string line = fmt::format("%{} = {} {}", value, op_name(op), type);
  for (int in : op.inputs) line += fmt::format(" %{}", in);
  const std::string attributes = op.operation->attributes();
  if (!attributes.empty()) line += " " + attributes;
  return line;
}

std::string return_line(const Program& program) {
  std::string line = "return";
  for (const Output& o : program.outputs) {
    line += fmt::format(" %{}", o.value);
    if (o.sharding) line += " sharding=" + o.sharding->spec().to_string();
  }
  return line;
}

std::vector<std::string> Program::lines() const {
  std::vector<std::string> out;
  out.reserve(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) out.push_back(op_line(ops[i], static_cast<int>(i)));
  out.push_back(return_line(*this));
  return out;
}

uint64_t Program::fingerprint() const {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const std::string& line : lines()) XXH3_64bits_update(state, line.data(), line.size() + 1);
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

std::vector<bool> live_values(const Program& program) {
  std::vector<bool> live(program.ops.size(), false);
  for (const Output& out : program.outputs) live[static_cast<size_t>(out.value)] = true;
  for (int v : program.effects) live[static_cast<size_t>(v)] = true;
  for (size_t v = program.ops.size(); v-- > 0;) {
    if (!live[v]) continue;
    for (int in : program.ops[v].inputs) live[static_cast<size_t>(in)] = true;
  }
  return live;
}

std::vector<Layout> parameter_layouts(const Program& program) {
  std::vector<Layout> out(static_cast<size_t>(program.parameters));
  for (const Op& op : program.ops) {
    if (const auto* p = op.as<ParameterOp>())
      out.at(static_cast<size_t>(p->index)) = layout_of(*p->sharding(), op.shape.size());
  }
  return out;
}

std::vector<std::optional<Layout>> asked_output_layouts(const Program& program) {
  std::vector<std::optional<Layout>> out;
  out.reserve(program.outputs.size());
  for (const Output& o : program.outputs) {
    if (!o.sharding) {
      out.emplace_back();
      continue;
    }
    out.emplace_back(
        layout_of(*o.sharding, program.ops[static_cast<size_t>(o.value)].shape.size()));
  }
  return out;
}

}  // namespace spmd::compiler
