// A shard_map call made again and again with one mesh, one set of specs and inputs already laid
// out as the specs ask: jit's compiled programs. What run_shard_map works out on every call —
// this process's devices, the call's identity, each output's sharding and every device's index
// into it — is worked out once per runtime session, so that a call costs the function and
// little else.
//
// Thread-safe: run() may be called from several threads (the device workers take turns).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "spmd/array.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"
#include "spmd/shard_map.h"

namespace spmd::detail {

class PlannedCall {
 public:
  // Output k is an out_dtypes[k] array of global shape out_shapes[k], laid out by
  // out_spec_of(out_specs, k). Null when an output's split is uneven: run_shard_map pads those.
  static std::shared_ptr<const PlannedCall> make(Mesh mesh, std::vector<PartitionSpec> in_specs,
                                                 std::vector<PartitionSpec> out_specs,
                                                 const std::string& program,
                                                 std::vector<Shape> out_shapes,
                                                 const std::vector<DType>& out_dtypes);

  // True when every input sits where its in_spec puts it, split evenly: run() takes it as it is.
  bool takes(std::span<const Array* const> inputs) const;

  // What run_shard_map(mesh, in_specs, out_specs, {.check_rep = false}, program, inputs, fn)
  // returns, for inputs that takes() accepts.
  std::vector<Array> run(std::span<const Array* const> inputs, const BlockFunction& fn) const;

  struct Output {
    Shape shape;
    Shape block;  // every device's
    DType dtype;
    std::shared_ptr<const Sharding> sharding;
  };
  struct Session;  // per runtime session: the axis groups, the local devices, their indices

 private:
  PlannedCall(Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
              uint64_t call, std::vector<Output> outputs);
  std::shared_ptr<const Session> session() const;

  Mesh mesh_;
  std::vector<PartitionSpec> in_specs_;
  std::vector<PartitionSpec> out_specs_;  // one per output
  uint64_t call_;
  std::vector<Output> outputs_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Session> session_;
};

}  // namespace spmd::detail
