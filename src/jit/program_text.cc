// LocalProgram::as_text(): the per-device program, one step a line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/local_program.h"
#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {
namespace {

// An edge's sharding as the partitioner's texts print a layout.
std::string edge_layout_text(const Edge& e, const Mesh& mesh) {
  return layout_text(layout_of(*e.sharding, e.shape.size()), mesh);
}

}  // namespace

std::string_view step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::kCompute:
      return "";
    case StepKind::kPsum:
      return "psum";
    case StepKind::kPmax:
      return "pmax";
    case StepKind::kPmin:
      return "pmin";
    case StepKind::kAllGather:
      return "all_gather";
    case StepKind::kPsumScatter:
      return "psum_scatter";
    case StepKind::kAllToAll:
      return "all_to_all";
    case StepKind::kLocalSlice:
      return "local_slice";
    case StepKind::kFused:
      return "fused";
    case StepKind::kFusedReduce:
      return "fused_reduce";
    case StepKind::kPsumThen:
      return "psum_then";
  }
  return "?";
}

std::string LocalProgram::as_text() const {
  std::vector<std::string> axes;
  for (size_t i = 0; i < mesh.axis_names().size(); ++i) {
    axes.push_back(fmt::format("{}={}", mesh.axis_names()[i], mesh.axis_sizes()[i]));
  }
  std::string text =
      fmt::format("jit({}) on mesh ({}), per device:\n", name, fmt::join(axes, ", "));
  std::vector<Shape> shapes(static_cast<size_t>(slots));
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Edge& p = parameters[i];
    shapes[static_cast<size_t>(p.slot)] = p.block;
    text +=
        fmt::format("  %{} = parameter {} {}  <- {} {}\n", p.slot, i, type_text(p.dtype, p.block),
                    type_text(p.dtype, p.shape), edge_layout_text(p, mesh));
  }
  for (const Step& s : steps) {
    shapes[static_cast<size_t>(s.output)] = s.shape;
    std::string line;
    if (s.kind == StepKind::kFused || s.kind == StepKind::kFusedReduce ||
        s.kind == StepKind::kPsumThen) {
      line = fmt::format("  %{} = {}", s.output, step_kind_name(s.kind));
      // The body reads the sum of its first input under that input's name.
      if (s.kind == StepKind::kPsumThen) {
        line += fmt::format("[{}]", fmt::join(axis_names(s.axes, mesh), ","));
      }
      line += " " + type_text(s.dtype, s.shape);
      for (int in : s.inputs) line += fmt::format(" %{}", in);
      line += " {";
      if (s.kind == StepKind::kPsumThen) {
        const Shape& in = shapes[static_cast<size_t>(s.inputs[0])];
        line +=
            fmt::format("   # {} B", shape_size(in) * static_cast<int64_t>(dtype_size(s.dtype)));
      }
      text += line + "\n";
      for (const Step& b : s.body) {
        std::string inner = fmt::format("      %{} = {}", b.output, b.operation->name());
        for (int in : b.inputs) inner += fmt::format(" %{}", in);
        if (!b.operation->attributes().empty()) inner += " " + b.operation->attributes();
        text += inner + "\n";
      }
      text += "    }\n";
      continue;
    }
    if (s.kind == StepKind::kCompute) {
      line =
          fmt::format("  %{} = {} {}", s.output, s.operation->name(), type_text(s.dtype, s.shape));
    } else {
      line = fmt::format("  %{} = {}[{}]", s.output, step_kind_name(s.kind),
                         fmt::join(axis_names(s.axes, mesh), ","));
      if (s.dim >= 0) line += fmt::format(" dim={}", s.dim);
      if (s.dim2 >= 0) line += fmt::format(" from_dim={}", s.dim2);
      line += " " + type_text(s.dtype, s.shape);
    }
    for (int in : s.inputs) line += fmt::format(" %{}", in);
    if (s.kind == StepKind::kCompute && !s.operation->attributes().empty()) {
      line += " " + s.operation->attributes();
    }
    if (communicates(s.kind)) {
      const Shape& in = shapes[static_cast<size_t>(s.inputs[0])];
      line += fmt::format("   # {} B", shape_size(in) * static_cast<int64_t>(dtype_size(s.dtype)));
    }
    text += line + "\n";
  }
  for (const Edge& out : outputs)
    text += fmt::format("  return %{} {}\n", out.slot, edge_layout_text(out, mesh));
  return text;
}

}  // namespace spmd::compiler
