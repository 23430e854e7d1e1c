// How far the host may run ahead of a GPU: jit calls return once their work is queued (JAX's
// asynchronous dispatch), and a bounded number of them may be unfinished at once. The bookkeeping
// of GpuContext::call_queued, apart from CUDA so that it is tested on the CPU
// (tests/kernels/cuda_calls_in_flight_test.cc).
//
// The bound is XLA's: its GPU client lets the host queue up to 32 executions ahead of a device
// (PjRtStreamExecutorClient's asynchronous mode), so that a Python loop cannot queue work without
// end, nor a timing loop measure only the host. SPMD_GPU_CALLS_IN_FLIGHT sets it; 0 makes every
// call wait for its own work, as a call did before (XLA's synchronous mode).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace spmd::kernels::cuda {

// The bound when SPMD_GPU_CALLS_IN_FLIGHT is not set, and the largest it may be.
inline constexpr int kDefaultCallsInFlight = 32;
inline constexpr int kMostCallsInFlight = 1024;

// The bound that SPMD_GPU_CALLS_IN_FLIGHT's value `text` names: kDefaultCallsInFlight when `text`
// is null or empty. InvalidArgument naming the variable for anything but a whole number from 0
// to kMostCallsInFlight.
int calls_in_flight_from(const char* text);

class CallsInFlight {
 public:
  // Returns once that call's work is done; throws the fault that work met.
  using Wait = std::function<void()>;

  // At most `most` calls unfinished (0 ≤ most ≤ kMostCallsInFlight; InvalidArgument otherwise).
  explicit CallsInFlight(int most);
  int most() const { return most_; }

  // A call's work is queued; `wait` waits for it. Returns once no more than most() queued calls
  // are left unwaited: it waits for the oldest beyond that, oldest first, without holding the
  // lock (so with most() = 0, for this call). A wait that throws passes its error on, and the
  // other calls due at that moment are dropped unwaited; those within the bound stay.
  // Thread-safe.
  void queued(Wait wait);
  // Forgets every call queued so far: the caller waited for all of the GPU's work.
  void clear();
  // How many calls are queued and not yet waited for.
  size_t pending() const;

 private:
  int most_;
  mutable std::mutex mu_;
  std::deque<Wait> waits_;  // oldest first
};

}  // namespace spmd::kernels::cuda
