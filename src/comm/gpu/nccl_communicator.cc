#include "comm/gpu/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "comm/gpu/nccl_status.h"
#include "spmd/error.h"

namespace spmd {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return ncclInt8;
    case DType::kUInt8:
    case DType::kBool:
      return ncclUint8;
    case DType::kInt32:
      return ncclInt32;
    case DType::kUInt32:
      return ncclUint32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kUInt64:
      return ncclUint64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    default:
      throw InvalidArgument(fmt::format(
          "NCCL collectives take no {} (int16 and uint16 are not NCCL types): convert first",
          dtype_name(dtype)));
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMin:
      return ncclMin;
    default:
      return ncclMax;
  }
}

class NcclCommunicator final : public DeviceCommunicator {
 public:
  NcclCommunicator(const NcclId& id, int rank, int size, int gpu)
      : rank_(rank), size_(size), gpu_(gpu) {
    ncclUniqueId unique;
    static_assert(sizeof(unique.internal) == sizeof(NcclId));
    std::memcpy(unique.internal, id.data(), id.size());
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // creation returns at once; poll() says when every rank has joined
    if (cudaSetDevice(gpu) != cudaSuccess) {
      throw FailedPrecondition(
          fmt::format("NCCL communicator on GPU {}: cudaSetDevice failed", gpu));
    }
    check_nccl(ncclCommInitRankConfig(&comm_, size, unique, rank, &config),
               fmt::format("ncclCommInitRankConfig (rank {} of {})", rank, size), gpu);
  }

  ~NcclCommunicator() override { abort(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_reduce(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                  void* stream) override {
    call(ncclAllReduce(in, out, count, nccl_type(dtype), nccl_op(op), comm(), cuda(stream)),
         "ncclAllReduce");
  }
  void all_gather(const void* in, void* out, size_t count, DType dtype, void* stream) override {
    call(ncclAllGather(in, out, count, nccl_type(dtype), comm(), cuda(stream)), "ncclAllGather");
  }
  void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                      void* stream) override {
    call(ncclReduceScatter(in, out, count, nccl_type(dtype), nccl_op(op), comm(), cuda(stream)),
         "ncclReduceScatter");
  }
  void broadcast(const void* in, void* out, size_t count, DType dtype, int root,
                 void* stream) override {
    call(ncclBroadcast(in, out, count, nccl_type(dtype), root, comm(), cuda(stream)),
         "ncclBroadcast");
  }

  DeviceCommStatus poll() override {
    std::lock_guard lock(mutex_);
    if (aborted_) return {DeviceCommState::kFailed, "the communicator was aborted"};
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(comm_, &state);
    if (queried != ncclSuccess) state = queried;
    if (state == ncclSuccess) return {DeviceCommState::kReady, {}};
    if (state == ncclInProgress) return {DeviceCommState::kInProgress, {}};
    return {DeviceCommState::kFailed,
            nccl_message(state, "the communicator", gpu_, ncclGetLastError(comm_)),
            state == ncclRemoteError || state == ncclSystemError};
  }

  void abort() override {
    std::lock_guard lock(mutex_);
    if (aborted_ || comm_ == nullptr) return;
    aborted_ = true;
    ncclCommAbort(comm_);  // its own errors are of no use to anyone now
  }

 private:
  static cudaStream_t cuda(void* stream) { return static_cast<cudaStream_t>(stream); }

  ncclComm_t comm() {
    std::lock_guard lock(mutex_);
    if (aborted_) {
      throw FailedPrecondition(fmt::format(
          "a collective on GPU {} after its NCCL communicator was aborted: make a new one", gpu_));
    }
    return comm_;
  }

  void call(ncclResult_t result, const char* what) {
    check_nccl(result, fmt::format("{} (rank {} of {})", what, rank_, size_), gpu_,
               result == ncclSuccess || result == ncclInProgress ? "" : ncclGetLastError(comm_));
  }

  int rank_, size_, gpu_;
  std::mutex mutex_;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
};

}  // namespace

NcclId make_nccl_id() {
  ncclUniqueId unique;
  check_nccl(ncclGetUniqueId(&unique), "ncclGetUniqueId", -1);
  NcclId id;
  std::memcpy(id.data(), unique.internal, id.size());
  return id;
}

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(const NcclId& id, int rank, int size,
                                                           int gpu) {
  return std::make_unique<NcclCommunicator>(id, rank, size, gpu);
}

std::string nccl_version() {
  int version = 0;
  ncclGetVersion(&version);
  return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}

}  // namespace spmd
