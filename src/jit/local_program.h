// The per-device program the partitioner makes of a traced program (partition.h): steps over
// numbered slots, each a local computation on this device's blocks or a collective over mesh
// axes. Every device of the mesh runs the same steps on blocks of the same shapes.
//
// It is complete in itself: its mesh is the device assignment, every slot has its per-device
// shape, and its parameters and outputs carry their global types and NamedShardings, the same
// objects the traced program's edges held. The executor (executable.h) runs it and nothing
// else; as_text() prints it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jit/layout.h"
#include "jit/program.h"
#include "spmd/mesh.h"
#include "spmd/sharding.h"

namespace spmd::compiler {

enum class StepKind : uint8_t {
  kCompute,      // `operation` on the input slots, with local shapes
  kPsum,         // all-reduce sum over `axes`
  kPmax,         // all-reduce max over `axes`
  kPmin,         // all-reduce min over `axes`
  kAllGather,    // gather dimension `dim` over `axes` (tiled)
  kPsumScatter,  // sum over `axes`, each device keeping its part of dimension `dim`
  kAllToAll,     // split dimension `dim` over `axes`, gather dimension `dim2`
  kLocalSlice,   // keep this device's part of dimension `dim` along `axes` (no communication)
  kFused,        // `body`: a chain of element-wise steps run as one (fuse.h)
  kFusedReduce,  // `body`: a chain of element-wise steps, then a reduction of its result
  kPsumThen,     // `body`: a chain of element-wise steps over the psum of inputs[0] over `axes`
};

struct Step {
  StepKind kind = StepKind::kCompute;
  // kCompute: what runs, the program operation's own or a local variant of it (a slice of a
  // split dimension starts at 0 of the device's part).
  std::shared_ptr<const Operation> operation;
  std::vector<int> inputs;
  int output = -1;
  Shape shape;  // local result shape
  DType dtype = DType::kFloat32;
  std::vector<int> axes;
  int dim = -1;
  int dim2 = -1;
  // Slots no later step reads (nor the outputs): freed once this step has run.
  std::vector<int> last_use_of;
  // kFused: the element-wise steps, in order; their intermediate slots exist only per block.
  // kFusedReduce: those steps, then the reduction (a kCompute step of ReduceOp) of the last one's
  // result, whose slot exists only per block too.
  // kPsumThen: the chain's steps, which read the sum of inputs[0] as slot inputs[0]; the other
  // inputs hold the same values on every device along `axes` (fuse.h: fuse_psum_chains).
  std::vector<Step> body;
};

// A parameter or an output of the per-device program: the slot holding each device's block of
// it, its global type and its sharding over the program's mesh (never a pending sum).
struct Edge {
  int slot = -1;
  DType dtype = DType::kFloat32;
  Shape shape;  // global
  std::shared_ptr<const NamedSharding> sharding;
  // Every device's block: ceil(global / parts) along a split dimension (layout.h: local_shape).
  Shape block;
  // Some dimension splits unevenly: the blocks carry padding (layout.h: padded_dims).
  bool padded = false;
};

struct LocalProgram {
  explicit LocalProgram(Mesh mesh) : mesh(std::move(mesh)) {}

  std::string name;  // the jitted function's
  Mesh mesh;         // every device of it runs `steps`
  std::vector<Step> steps;
  int slots = 0;
  std::vector<Edge> parameters;  // by flat argument
  std::vector<Edge> outputs;
  // Per slot, the mesh axes along which its blocks may differ (bit a: mesh axis a): those its
  // layout splits or leaves a pending sum over, and inside a shard_map the axes its value varies
  // over (manual.h: varying_axes); every bit for a slot the partitioner did not record (an
  // intermediate of a resharding). Empty for a program not made by partition().
  std::vector<uint64_t> varying;
  // The traced program with each value's layout (Lowered::global_text()).
  std::string global_text;

  // The program one step a line (Lowered::as_text()): its mesh, each parameter's per-device and
  // global type, the steps with their local types, and the outputs' shardings.
  std::string as_text() const;
};

// A step kind's name in as_text() ("psum", "local_slice", "fused"; "" for kCompute, which
// prints its operation).
std::string_view step_kind_name(StepKind k);

// True for a step that communicates.
constexpr bool communicates(StepKind k) {
  return k != StepKind::kCompute && k != StepKind::kLocalSlice;
}

}  // namespace spmd::compiler
