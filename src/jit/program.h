// The typed program a jit trace records: a list of operations in order, each producing one value
// (value i is operation i's result) with a global shape and dtype. Operands are earlier values.
// A program is plain data: tracing builds it (trace.h), propagation gives each value a layout
// (propagate.h), lowering turns it into the per-device program (lower.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "spmd/dtype.h"
#include "spmd/host_array.h"
#include "spmd/sharding.h"

namespace spmd::compiler {

enum class OpKind : uint8_t {
  kParameter,   // ints[0]: the flat argument index
  kConstant,    // constant: a captured HostArray (replicated)
  kFull,        // scalar, converted to dtype
  kIota,        // 0, 1, … along ints[0]
  kUnary,       // code: kernels::Unary
  kBinary,      // code: kernels::Binary; operands already broadcast to the result's shape
  kSelect,      // operands: cond, a, b, all of the result's shape
  kConvert,     // to dtype
  kBroadcast,   // NumPy broadcast of the operand to shape
  kReshape,     // same elements, shape
  kTranspose,   // ints: the permutation
  kReduce,      // code: kernels::Reduce; ints: the reduced axes, ascending; dims dropped
  kArgmax,      // ints[0]: the axis; dropped; int32
  kDot,         // (B…, M, K) · (B…, K, N) -> (B…, M, N)
  kSlice,       // ints: starts (extents are shape)
  kConcat,      // ints[0]: the axis
  kConstraint,  // sharding: the layout the value must have here (with_sharding_constraint)
  // lax::shard_map (traced_shard_map.h): values between kManualIn and kManualOut are one device's
  // blocks, with local shapes, and the partitioner treats them as replicated (no communication
  // but kAxisSum's).
  kManualIn,   // sharding: (mesh, in_spec); the operand laid out so, each device's block of it
  kManualOut,  // sharding: (mesh, out_spec); the global value whose blocks the operand holds
  kAxisSum,    // psum of a block over the mesh axes at positions ints (sharding: (mesh, P()))
};

struct Op {
  OpKind kind = OpKind::kParameter;
  std::vector<int> inputs;
  Shape shape;
  DType dtype = DType::kFloat32;
  uint8_t code = 0;
  std::vector<int64_t> ints;
  double scalar = 0;
  std::shared_ptr<const HostArray> constant;
  std::shared_ptr<const NamedSharding> sharding;
};

struct Program {
  std::vector<Op> ops;
  std::vector<int> outputs;  // values returned, in order
  int parameters = 0;

  // One line per operation, "%3 = add f32[8,4] %1 %2", and a final "return %5 %6": what the
  // fingerprint hashes and a mismatch error quotes.
  std::vector<std::string> lines() const;
  // A 64-bit hash of lines() and every parameter's sharding.
  uint64_t fingerprint() const;
};

// "f32[8,4]" (NumPy-like short dtype names: bool, i8…i64, u8…u64, f16, bf16, f32, f64).
std::string type_text(DType dtype, const Shape& shape);
// "add", "reduce_sum", "dot", …
std::string op_name(const Op& op);

}  // namespace spmd::compiler
