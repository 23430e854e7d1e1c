#include "jit/program_parse.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <string>
#include <vector>

#include "jit/op_registry.h"
#include "jit/ops/parameter.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

// The line's words, a word running on through spaces inside (), [] and {}.
std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::string word;
  int depth = 0;
  for (char c : line) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ' ' && depth == 0) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
      continue;
    }
    word += c;
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

int64_t to_int(std::string_view s, std::string_view what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    throw InvalidArgument(fmt::format("{} '{}' is not an integer", what, s));
  }
  return v;
}

// "%12" -> 12, an earlier value of `count`.
int value_ref(std::string_view s, size_t count) {
  if (s.empty() || s[0] != '%') throw InvalidArgument(fmt::format("'{}' is not a %value", s));
  const int64_t v = to_int(s.substr(1), "value");
  if (v < 0 || static_cast<size_t>(v) >= count) {
    throw InvalidArgument(fmt::format("{} is not an earlier value", s));
  }
  return static_cast<int>(v);
}

Op parse_op(const std::vector<std::string>& w, const Program& program, const Mesh& mesh) {
  if (w.size() < 4 || w[1] != "=") throw InvalidArgument("not '%N = name type …'");
  if (value_ref(w[0], program.ops.size() + 1) != static_cast<int>(program.ops.size())) {
    throw InvalidArgument(
        fmt::format("{} is out of order: expected %{}", w[0], program.ops.size()));
  }
  const OperationParser* parse = find_operation(w[2]);
  if (parse == nullptr) throw InvalidArgument(fmt::format("no operation is named '{}'", w[2]));
  const ValueType declared = parse_type(w[3]);
  Op op;
  std::vector<ValueType> operands;
  std::map<std::string, std::string> attributes;
  for (size_t i = 4; i < w.size(); ++i) {
    if (w[i][0] == '%') {
      if (!attributes.empty()) throw InvalidArgument("an operand after an attribute");
      op.inputs.push_back(value_ref(w[i], program.ops.size()));
      operands.push_back(program.ops[static_cast<size_t>(op.inputs.back())].type());
      continue;
    }
    const size_t eq = w[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InvalidArgument(fmt::format("'{}' is neither %value nor name=value", w[i]));
    }
    attributes.emplace(w[i].substr(0, eq), w[i].substr(eq + 1));
  }
  op.operation = (*parse)(AttributeReader(w[2], std::move(attributes), declared, operands, mesh));
  const ValueType typed = typed_result(*op.operation, operands, &mesh);
  if (!(typed == declared)) {
    throw InvalidArgument(fmt::format("declares {}, but {}'s rules give {}", typed_text(declared),
                                      w[2], typed_text(typed)));
  }
  op.shape = typed.shape;
  op.dtype = typed.dtype;
  op.spec = typed.spec;
  return op;
}

// Each of the program's parameters numbered 0, 1, … once.
void check_parameter_indices(const Program& program) {
  std::vector<bool> seen(static_cast<size_t>(program.parameters), false);
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const auto* p = program.ops[v].as<ParameterOp>();
    if (p == nullptr) continue;
    if (p->index < 0 || p->index >= program.parameters || seen[static_cast<size_t>(p->index)]) {
      throw InvalidArgument(fmt::format(
          "program text: %{} is parameter index={}, but a program of {} parameters numbers them "
          "0 to {}, each once",
          v, p->index, program.parameters, program.parameters - 1));
    }
    seen[static_cast<size_t>(p->index)] = true;
  }
}

// "return %5 sharding=PartitionSpec('a',) %6": each output, and the sharding asked of it.
void read_outputs(const std::vector<std::string>& w, const Mesh& mesh, Program& program) {
  constexpr std::string_view kSharding = "sharding=";
  for (size_t i = 1; i < w.size(); ++i) {
    if (!w[i].starts_with(kSharding)) {
      program.outputs.push_back({value_ref(w[i], program.ops.size()), nullptr});
      continue;
    }
    if (program.outputs.empty() || program.outputs.back().sharding) {
      throw InvalidArgument(fmt::format("'{}' follows no output of its own", w[i]));
    }
    Output& out = program.outputs.back();
    PartitionSpec spec;
    try {
      spec = parse_partition_spec(std::string_view(w[i]).substr(kSharding.size()));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("the sharding of %{} {}", out.value, e.what()));
    }
    out.sharding = std::make_shared<const NamedSharding>(mesh, std::move(spec));
    layout_of(*out.sharding, program.ops[static_cast<size_t>(out.value)].shape.size());
  }
}

}  // namespace

namespace {

// "x" or "(x,y)": the axes after a dimension's '@'.
AxisEntry axes_of(std::string_view text) {
  if (text.empty()) throw InvalidArgument("'@' without a mesh axis");
  if (text.front() != '(') return AxisEntry(std::string(text));
  if (text.back() != ')') throw InvalidArgument(fmt::format("'{}' lacks its ')'", text));
  std::vector<std::string> axes;
  text = text.substr(1, text.size() - 2);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    axes.emplace_back(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return AxisEntry(std::move(axes));
}

}  // namespace

ValueType parse_type(std::string_view text) {
  const size_t open = text.find('[');
  if (open == std::string_view::npos || text.back() != ']') {
    throw InvalidArgument(fmt::format("'{}' is not a type such as f32[8,4]", text));
  }
  ValueType t;
  bool known = false;
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    if (text.substr(0, open) == short_dtype_name(static_cast<DType>(i))) {
      t.dtype = static_cast<DType>(i);
      known = true;
    }
  }
  if (!known) throw InvalidArgument(fmt::format("'{}' names no dtype", text.substr(0, open)));
  std::string_view dims = text.substr(open + 1, text.size() - open - 2);
  std::vector<AxisEntry> entries;
  while (!dims.empty()) {
    // "8", "8@x" or "8@(x,y)": a dimension and the Explicit axes splitting it.
    const size_t paren = dims.find('(');
    size_t comma = dims.find(',');
    if (paren != std::string_view::npos && paren < comma) comma = dims.find(',', dims.find(')'));
    const std::string_view dim = dims.substr(0, comma);
    const size_t at = dim.find('@');
    t.shape.push_back(to_int(dim.substr(0, at), "dimension"));
    if (t.shape.back() < 0) throw InvalidArgument(fmt::format("'{}': a negative dimension", text));
    entries.push_back(at == std::string_view::npos ? AxisEntry() : axes_of(dim.substr(at + 1)));
    dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
  }
  t.spec = canonical_spec(std::move(entries));
  return t;
}

Program parse_program(std::string_view text, const Mesh& mesh) {
  Program program;
  bool returned = false;
  int number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++number;
    const std::vector<std::string> w = words(line);
    if (w.empty() || w[0][0] == '#') continue;
    try {
      if (returned) throw InvalidArgument("a line after return");
      if (w[0] == "return") {
        read_outputs(w, mesh, program);
        returned = true;
        continue;
      }
      program.ops.push_back(parse_op(w, program, mesh));
      if (program.ops.back().is<ParameterOp>()) ++program.parameters;
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("program text, line {} ({}): {}", number, line, e.what()));
    }
  }
  if (!returned) throw InvalidArgument("program text: no return line");
  check_parameter_indices(program);
  return program;
}

}  // namespace spmd::compiler
