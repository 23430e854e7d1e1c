// How spmd calls OpenBLAS (its BLAS and its LAPACK) from many device threads at once.
#pragma once

#include <cblas.h>

#include <cstdlib>
#include <mutex>

namespace spmd::kernels {

// Every device thread multiplies at once. OpenBLAS's threaded build takes that (its work
// buffers are claimed under a lock); Debian 12's sequential build (libopenblas0-serial 0.3.21)
// does not: two threads can be handed the same buffer, and 167 of 2000 runs of 4 threads calling
// dgemm together got a wrong product (a jit gradient on 4 devices came out as one device's
// contribution twice). So: with a threaded build, one BLAS thread per call (OPENBLAS_NUM_THREADS,
// when set, wins), the device's team (thread_team.h) splitting a large product into calls of
// its own; with a sequential one, one call at a time.
//
// Why not OpenBLAS's own threads: their count is one setting for the whole process, and its
// threaded level-3 driver takes one call at a time (level3_lock), so devices multiplying together
// would queue behind each other. Split by the team, each device uses its own cores and never
// waits for another's product (DESIGN.md, "Kernels": the measurements). LAPACK's factorizations
// (linalg.cc) go through the same guard, and so run on one thread each as well.
class BlasCalls {
 public:
  static const BlasCalls& get() {
    static const BlasCalls calls;
    return calls;
  }
  // Calls f: at once with a threaded OpenBLAS, one caller at a time with a sequential one.
  template <class F>
  void run(F&& f) const {
    if (!one_at_a_time_) return f();
    std::lock_guard lock(mu_);
    f();
  }

 private:
  BlasCalls() : one_at_a_time_(openblas_get_parallel() == 0) {
    if (!one_at_a_time_ && std::getenv("OPENBLAS_NUM_THREADS") == nullptr) {
      openblas_set_num_threads(1);
    }
  }
  bool one_at_a_time_;
  mutable std::mutex mu_;
};

}  // namespace spmd::kernels
