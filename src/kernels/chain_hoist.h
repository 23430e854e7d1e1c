// Steps of an element-wise chain (chain.h) that every element computes alike, computed once.
//
// jit's fusion (jit/fuse.h) puts a scalar computation into the chain that reads it, such as
// Adam's bias correction 1 - b1^t inside the update m / (1 - b1^t): on a GPU that saves a kernel
// launch per scalar step, each element recomputing the few scalar operations for free. On the
// CPU each element would recompute them too, a pow per element; hoisting them computes each
// once a call, with the step's own kernel, and hands its one value to the rest of the chain as a
// scalar input. Values are unchanged: the same kernel on the same operands.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/chain.h"

namespace spmd::kernels {

// A chain with its uniform steps computed: a step is uniform when each of its operands is a
// scalar input (one element) or a uniform step's result. The last step is never hoisted (it
// writes the n elements). `steps` and `inputs` are the chain to run in place of the original:
// the original inputs, then one scalar input per hoisted step (its value in `values`), and the
// remaining steps in their order, their operands renumbered. With nothing hoisted they are the
// original spans, and nothing was allocated.
struct HoistedChain {
  struct alignas(16) Value {
    std::array<std::byte, 16> bytes;  // one element of any dtype
  };
  std::span<const ChainStep> steps;
  std::span<const Input> inputs;
  int hoisted = 0;
  std::vector<ChainStep> own_steps;  // what `steps` shows where something was hoisted
  std::vector<Input> own_inputs;     // what `inputs` shows where something was hoisted
  std::vector<Value> values;         // one per hoisted step: its result, which `inputs` points into

  HoistedChain() = default;
  HoistedChain(HoistedChain&&) = default;  // a vector's move keeps its elements where they are
  HoistedChain& operator=(HoistedChain&&) = default;
  HoistedChain(const HoistedChain&) = delete;  // a copy's spans would show the original's
  HoistedChain& operator=(const HoistedChain&) = delete;
};

// The chain `steps` over `inputs` with its uniform steps computed, for a chain of n > 1 elements
// (with n ≤ 1 nothing is hoisted: each step runs once anyway). The result's spans may show
// `steps` and `inputs`, which must outlive it. A malformed chain (a step reading
// a later step or a missing input) is returned unhoisted for run_chain to refuse. Throws what a
// hoisted step's kernel throws (an integer division by zero), as running the chain would.
HoistedChain hoist_uniform_steps(std::span<const ChainStep> steps, std::span<const Input> inputs,
                                 int64_t n);

}  // namespace spmd::kernels
