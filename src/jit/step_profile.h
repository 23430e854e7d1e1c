// Where jit's time goes, per operation: with SPMD_JIT_PROFILE=1, every step a device runs is
// timed on the host and summed by what it is ("dot_general", "fused chain of 4", "psum"), with
// each call's phases beside them ("call: inputs", "call: wait for the device"), and the table is
// printed to stderr when the process exits, the largest total first. On a GPU a step's host
// time is what issuing its work costs (kernels are queued, not awaited) plus any wait inside it,
// so the table shows the host's share of a step that the GPU finishes sooner. Off (the
// default), each step costs one test of a pointer.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace spmd::compiler {

class StepProfile {
 public:
  using Clock = std::chrono::steady_clock;

  // The process's profile while SPMD_JIT_PROFILE is 1 (read once); null otherwise.
  static StepProfile* active();

  // Adds one timing of `what`. Thread-safe: device threads add at once.
  void add(std::string_view what, Clock::duration time);
  // The table: per entry its count, its total, its first timing and the mean of the later ones
  // in microseconds (the first holds one-time setup: a cuBLAS handle, a communicator), largest
  // total first.
  std::string table() const;

 private:
  StepProfile() = default;
};

// Times a scope into the active profile, if any, under `what`.
class ProfiledScope {
 public:
  ProfiledScope(StepProfile* profile, std::string_view what)
      : profile_(profile),
        what_(what),
        start_(profile ? StepProfile::Clock::now() : StepProfile::Clock::time_point{}) {}
  ~ProfiledScope() {
    if (profile_) profile_->add(what_, StepProfile::Clock::now() - start_);
  }
  ProfiledScope(const ProfiledScope&) = delete;
  ProfiledScope& operator=(const ProfiledScope&) = delete;

 private:
  StepProfile* profile_;
  std::string_view what_;
  StepProfile::Clock::time_point start_;
};

}  // namespace spmd::compiler
