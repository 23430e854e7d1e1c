// Collectives on device memory, behind one interface, with NCCL's contract: the seam between
// spmd's GPU collectives and NCCL, so that what decides when a collective has failed (the
// watchdog, bootstrap, the fingerprint check before the first call) is tested on the CPU against
// a test implementation, and the NCCL implementation (comm/gpu/nccl_communicator.h) stays thin.
//
// NCCL's contract, which every implementation keeps:
// - creation may be non-blocking: the communicator is kInProgress until every rank has joined,
//   and poll() says when it is ready or has failed;
// - a collective is queued on the caller's stream and returns before it runs; a peer that never
//   arrives leaves it running forever, so only poll() (NCCL's ncclCommGetAsyncError) and a
//   deadline kept by the caller can tell;
// - abort() returns promptly whatever is queued, leaves the communicator unusable, and makes the
//   queued work end (with undefined results): a new communicator replaces it.
// Implementations are used from one thread at a time, except poll() and abort(), which a watchdog
// thread may call while another thread queues.
#pragma once

#include <cstddef>
#include <string>

#include "spmd/dtype.h"
#include "spmd/reduce_op.h"

namespace spmd {

enum class DeviceCommState { kReady, kInProgress, kFailed };

struct DeviceCommStatus {
  DeviceCommState state = DeviceCommState::kReady;
  std::string error;       // kFailed: what the library said
  bool peer_lost = false;  // kFailed: a peer or the network failed (NCCL's remote or system error)
};

class DeviceCommunicator {
 public:
  virtual ~DeviceCommunicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Each queues one collective on `stream` (a cudaStream_t, or the test implementation's own)
  // and returns. `count` is elements per rank as NCCL counts them: all_reduce in/out count;
  // all_gather in count, out count × size; reduce_scatter in count × size, out count;
  // broadcast count, `in` read on `root` only. Throws the spmd error for a call the library
  // refuses (an unsupported dtype, a communicator that has failed).
  virtual void all_reduce(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                          void* stream) = 0;
  virtual void all_gather(const void* in, void* out, size_t count, DType dtype, void* stream) = 0;
  virtual void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                              void* stream) = 0;
  virtual void broadcast(const void* in, void* out, size_t count, DType dtype, int root,
                         void* stream) = 0;

  // The communicator's state now, without blocking.
  virtual DeviceCommStatus poll() = 0;
  // Ends the communicator at once (NCCL's ncclCommAbort); idempotent.
  virtual void abort() = 0;
};

}  // namespace spmd
