// The typed program a jit trace records: a list of operations in order, each producing one value
// (value i is operation i's result) with a global shape and dtype. Operands are earlier values.
// A program is plain data: tracing builds it (trace.h), the partitioner gives each value a layout
// and makes the per-device program (partition.h), program_parse.h reads its text back.
//
// Its edges hold their own shardings, in the one form jit takes them in: each parameter
// (ParameterOp) the NamedSharding its argument is laid out as, each output the one out_shardings
// asks for, if any. The partitioner reads them there and nowhere else.
// Open to lib/: the program's types (ValueType, Op) and type_text for errors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/layout.h"
#include "jit/operation.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::compiler {

struct Op {
  std::shared_ptr<const Operation> operation;  // the kind, its attributes and its rules
  std::vector<int> inputs;
  Shape shape;
  DType dtype = DType::kFloat32;
  PartitionSpec spec;  // the type's Explicit axes (ValueType::spec)

  // The operation as kind T, or null when it is of another kind.
  template <class T>
  const T* as() const {
    return dynamic_cast<const T*>(operation.get());
  }
  template <class T>
  bool is() const {
    return as<T>() != nullptr;
  }
  ValueType type() const { return {dtype, shape, spec}; }
};

// A value the program returns, and the sharding jit's out_shardings asks of it (on the program's
// mesh; null: the one propagation gives it).
struct Output {
  int value = -1;
  std::shared_ptr<const NamedSharding> sharding;
};

struct Program {
  std::vector<Op> ops;
  std::vector<Output> outputs;  // in order
  // The values of operations kept for their effect (Operation::has_effect), in trace order; vmap
  // replaces one by its per-slice copies.
  std::vector<int> effects;
  int parameters = 0;

  // One line per operation, "%3 = reduce_sum f32[8] %1 axes={1}", and a final
  // "return %5 %6 sharding=PartitionSpec('dp',)", each output followed by its asked sharding:
  // what the fingerprint hashes, a mismatch error quotes and parse_program() reads back.
  std::vector<std::string> lines() const;
  // A 64-bit hash of lines() (which include every parameter's sharding).
  uint64_t fingerprint() const;
};

// Per value, whether the outputs or the effects depend on it. The rest is never lowered: a
// traced function's unused values, and in a backward program the cotangents nobody asked for
// (grad of the weights does not need the input's gradient, nor the forward results the rules do
// not read).
std::vector<bool> live_values(const Program& program);
// The layout of each parameter, by flat argument, as its ParameterOp's sharding gives it.
std::vector<Layout> parameter_layouts(const Program& program);
// The layout out_shardings asks of each output; nullopt where it asks none.
std::vector<std::optional<Layout>> asked_output_layouts(const Program& program);
// The short name a type's text gives `dtype`: bool, i8…i64, u8…u64, f16, bf16, f32, f64.
std::string_view short_dtype_name(DType dtype);
// "f32[8,4]".
std::string type_text(DType dtype, const Shape& shape);
// "add", "reduce_sum", "dot", …
std::string op_name(const Op& op);
// The line of value `value`: "%3 = reduce_sum f32[8] %1 axes={1}".
std::string op_line(const Op& op, int value);
// The program's last line: "return %5 sharding=PartitionSpec('dp',) %6".
std::string return_line(const Program& program);

}  // namespace spmd::compiler
