#include "jit/program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

namespace spmd::compiler {

std::string type_text(DType dtype, const Shape& shape) {
  constexpr std::string_view names[] = {"bool", "i8",  "i16", "i32",  "i64", "u8", "u16",
                                        "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return fmt::format("{}[{}]", names[static_cast<int>(dtype)], fmt::join(shape, ","));
}

std::string op_name(const Op& op) {
  switch (op.kind) {
    case OpKind::kParameter:
      return "parameter";
    case OpKind::kConstant:
      return "constant";
    case OpKind::kFull:
      return "full";
    case OpKind::kIota:
      return "iota";
    case OpKind::kUnary:
      return std::string(kernels::name(static_cast<kernels::Unary>(op.code)));
    case OpKind::kBinary:
      return std::string(kernels::name(static_cast<kernels::Binary>(op.code)));
    case OpKind::kSelect:
      return "select";
    case OpKind::kConvert:
      return "convert";
    case OpKind::kBroadcast:
      return "broadcast";
    case OpKind::kReshape:
      return "reshape";
    case OpKind::kTranspose:
      return "transpose";
    case OpKind::kReduce:
      return "reduce_" + std::string(kernels::name(static_cast<kernels::Reduce>(op.code)));
    case OpKind::kArgmax:
      return "argmax";
    case OpKind::kDot:
      return "dot";
    case OpKind::kSlice:
      return "slice";
    case OpKind::kConcat:
      return "concatenate";
    case OpKind::kConstraint:
      return "sharding_constraint";
    case OpKind::kManualIn:
      return "shard_map_in";
    case OpKind::kManualOut:
      return "shard_map_out";
    case OpKind::kAxisSum:
      return "psum";
  }
  return "?";
}

namespace {

std::string attributes(const Op& op) {
  std::string s;
  if (!op.ints.empty()) s += fmt::format(" {{{}}}", fmt::join(op.ints, ","));
  if (op.kind == OpKind::kFull) s += fmt::format(" {}", op.scalar);
  if (op.kind == OpKind::kConstant) {
    s += fmt::format(" #{:016x}", XXH3_64bits(op.constant->bytes().data(), op.constant->nbytes()));
  }
  if (op.sharding) s += " " + op.sharding->spec().to_string();
  return s;
}

}  // namespace

std::vector<std::string> Program::lines() const {
  std::vector<std::string> out;
  out.reserve(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    std::string line = fmt::format("%{} = {} {}", i, op_name(op), type_text(op.dtype, op.shape));
    for (int in : op.inputs) line += fmt::format(" %{}", in);
    out.push_back(line + attributes(op));
  }
  std::string ret = "return";
  for (int v : outputs) ret += fmt::format(" %{}", v);
  out.push_back(ret);
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

}  // namespace spmd::compiler
