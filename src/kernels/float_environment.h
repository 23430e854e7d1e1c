// The floating-point environment kernels run in: subnormal inputs read as zero and subnormal
// results flush to zero, as XLA's CPU backend runs JAX's computations (it sets the same two
// bits around every computation). Without it, a subnormal's fate would depend on whether a
// vectorised body or a scalar tail met it, that is on how many elements a device holds: log of
// 1e-45 was -87.3 in one and -103.3 in the other, exp(-inf) 2.9e-39 instead of 0.
//
// Bit operations (abs, negation, select, copies, casts between float widths) pass subnormals
// through unchanged, as XLA's do; arithmetic, comparisons and transcendentals see zero.
//
// The mode is per thread. shard_map and jit set it around each device's function
// (compute/device_run.cc); code outside (the user's own host code) keeps the default.
#pragma once

#include <cstdint>

namespace spmd::kernels {

// Sets flush-to-zero and denormals-are-zero on the calling thread for its lifetime, and
// restores the previous mode after. On a processor without the controls (neither x86-64 nor
// AArch64), does nothing.
class FlushSubnormalsScope {
 public:
  FlushSubnormalsScope();
  ~FlushSubnormalsScope();
  FlushSubnormalsScope(const FlushSubnormalsScope&) = delete;
  FlushSubnormalsScope& operator=(const FlushSubnormalsScope&) = delete;

 private:
  uint64_t previous_;
};

// The calling thread's floating-point control word (MXCSR, FPCR; 0 elsewhere).
uint64_t float_mode();

// Whether the calling thread's arithmetic reads subnormal inputs as zero (MXCSR's DAZ, FPCR's
// FZ): what a kernel working on the bits must do by hand to give arithmetic's answer.
bool subnormals_read_as_zero();

// Puts `mode` (a float_mode() of another thread) in place on the calling thread for its
// lifetime, and restores the previous one after: a team's helper adopting its caller's
// environment (thread_team.h).
class FloatModeScope {
 public:
  explicit FloatModeScope(uint64_t mode);
  ~FloatModeScope();
  FloatModeScope(const FloatModeScope&) = delete;
  FloatModeScope& operator=(const FloatModeScope&) = delete;

 private:
  uint64_t previous_;
};

}  // namespace spmd::kernels
