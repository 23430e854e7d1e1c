// A compiled jit program bound to this process's devices of its mesh, run as JAX runs a loaded
// executable: each argument laid out as its parameter's sharding asks (device_put where it is
// not), the per-device program (local_program.h) run by execute() on every local device's worker
// inside its axis context, the outputs checked across the mesh and assembled into global arrays
// in the outputs' own shardings. jit drives the call from here down: compute/ only lends its
// device workers, axis contexts and output check (compute/device_run.h), and never calls up.
//
// An uneven split runs padded, as XLA tiles it: each device's block is ceil(size / parts) along
// a split dimension, zeros after its part on the way in, and cut back to its part on the way out.
//
// Thread-safe: run() may be called from several threads (the device workers take turns).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "jit/local_program.h"
#include "spmd/array.h"
#include "spmd/block.h"

namespace spmd::compiler {

class KeptSteps;
struct KernelContext;

class Executable {
 public:
  // `identity` names the program in the per-call output check, so that processes running
  // different programs whose collectives line up are told; `platform` names the backend the mesh
  // devices compute on, looked up at each run (kernels::backend_for). Each device computes in
  // the memory that backend gives it (Backend::memory): where that is not host memory, its
  // input blocks are copied there first and its outputs copied back when the arrays are made.
  Executable(LocalProgram program, std::string identity, std::string platform);

  const LocalProgram& program() const { return program_; }
  const std::string& identity() const { return identity_; }

  // True when run() takes every input as it is, with no copy: laid out as its parameter's
  // sharding asks and split evenly, every output split evenly too. jit's fast path remembers
  // such calls and runs them with run_laid_out().
  bool takes(std::span<const Array* const> inputs) const;

  // The program's outputs for `inputs` (one per parameter), each laid out first where it is
  // not; none, with nothing run, for a program without outputs. Throws what a device threw,
  // after every device has returned.
  std::vector<Array> run(std::span<const Array* const> inputs) const;
  // The same for inputs takes() accepts, without looking at their layout again.
  std::vector<Array> run_laid_out(std::span<const Array* const> inputs) const;

  struct Session;  // per runtime session: the axis groups, the local devices, the outputs' places
  struct Replay;   // per session and device: calls the backend replays (Backend::run_call)

 private:
  std::shared_ptr<const Session> session() const;
  // Runs the steps on every local device's blocks; returns each device's output blocks.
  std::vector<std::vector<Block>> run_devices(const Session& s,
                                              std::vector<std::vector<Block>>& blocks) const;
  std::vector<Array> assemble(const Session& s, std::vector<std::vector<Block>>& results) const;
  // One device's execute() of a program on one device, through Backend::run_call (a GPU replays
  // it as a CUDA graph), its results copied out of memory the backend reuses. A program of 4
  // steps or more whose inputs come to at most 1 MiB a step and 64 MiB in all first copies them
  // into buffers of its own (Replay::slots), so that a loop passing new arrays every call (a
  // train step's state) replays one graph; other programs replay a graph only when their input
  // buffers are those of a kept graph's call.
  void run_replayable(const KernelContext& device, std::vector<Block>& inputs, KeptSteps& kept,
                      Replay& replay, std::vector<Block>& results) const;

  LocalProgram program_;
  std::string identity_;
  std::string platform_;
  std::string what_;                      // "jit(name)", what a failed device's error names
  std::vector<PartitionSpec> out_specs_;  // the outputs' shardings' specs, for the output check
  uint64_t call_ = 0;                     // the identity hashed with every spec
  bool padded_ = false;                   // some parameter or output splits unevenly
  bool effects_ = false;                  // some step is kept for its effect (a host callback)
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Session> session_;
};

}  // namespace spmd::compiler
