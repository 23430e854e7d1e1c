// A thread with a stack of a chosen, fixed size, joined on destruction.
//
// The coordination service runs its event loop on one: its handlers never recurse, so a modest
// stack is plenty, and a recursion that grows with the cluster (one level per dead peer, say)
// fails in a test at a few thousand processes instead of only in production at tens of
// thousands.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>
#include <string>

namespace spmd {

class FixedStackThread {
 public:
  FixedStackThread() = default;
  // Starts `body` on a new thread named `name` (at most 15 characters) with `stack_bytes` of
  // stack. Throws spmd::Error when the thread cannot be created, or FailedPrecondition when
  // this object already runs one.
  void start(std::string name, size_t stack_bytes, std::function<void()> body);
  ~FixedStackThread() { join(); }
  FixedStackThread(const FixedStackThread&) = delete;
  FixedStackThread& operator=(const FixedStackThread&) = delete;

  bool joinable() const { return started_; }
  // Waits for the body to return. A no-op when not started or already joined.
  void join();

 private:
  static void* run(void* self);

  pthread_t thread_{};
  bool started_ = false;
  std::string name_;
  std::function<void()> body_;
};

}  // namespace spmd
