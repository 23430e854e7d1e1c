#include "comm/device_group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "spmd/error.h"

namespace spmd {
namespace {

using Clock = std::chrono::steady_clock;

// The watchdog's number for a communicator's creation, apart from the collectives' 0, 1, ….
constexpr uint64_t kCreation = std::numeric_limits<uint64_t>::max();

}  // namespace

DeviceGroup::DeviceGroup(Communicator host, MemorySpace memory, const DeviceCommFactory& factory,
                         DeviceQueue queue, DeviceGroupConfig config)
    : host_(std::move(host)),
      memory_(memory),
      factory_(factory),
      queue_(std::move(queue)),
      config_(std::move(config)) {
  group_.name = fmt::format("{:x}:{}", host_.id(), fmt::join(host_.device_ids(), ","));
  group_.rank = host_.rank();
  group_.processes = config_.processes;
  if (group_.processes.size() != static_cast<size_t>(host_.size())) {
    throw InvalidArgument(fmt::format("DeviceGroup: {} processes named for a group of {} ranks",
                                      group_.processes.size(), host_.size()));
  }
  if (host_.size() > 1 && config_.client == nullptr) {
    throw FailedPrecondition(
        fmt::format("device collectives of {} ranks need the job's key-value store: call "
                    "spmd::distributed::initialize() first",
                    host_.size()));
  }
}

DeviceGroup::~DeviceGroup() = default;

void DeviceGroup::all_reduce(const void* in, void* out, size_t count, DType dtype, ReduceOp op) {
  run({0, 0, CollectiveOp::kAllReduce, dtype, op, -1, count},
      [&](DeviceCommunicator& c) { c.all_reduce(in, out, count, dtype, op, queue_.stream); });
}

void DeviceGroup::all_gather(const void* in, void* out, size_t count, DType dtype) {
  run({0, 0, CollectiveOp::kAllGather, dtype, ReduceOp::kSum, -1, count},
      [&](DeviceCommunicator& c) { c.all_gather(in, out, count, dtype, queue_.stream); });
}

void DeviceGroup::reduce_scatter(const void* in, void* out, size_t count, DType dtype,
                                 ReduceOp op) {
  run({0, 0, CollectiveOp::kReduceScatter, dtype, op, -1, count},
      [&](DeviceCommunicator& c) { c.reduce_scatter(in, out, count, dtype, op, queue_.stream); });
}

void DeviceGroup::run(Fingerprint call, const std::function<void(DeviceCommunicator&)>& enqueue) {
  if (made_ && watchdog_->tripped() && !failure_reported_) {
    // It tripped between calls (the watchdog's thread saw an asynchronous error): the caller
    // hears of it once, and the call after rebuilds.
    report_failure();
  }
  if (!made_ || watchdog_->tripped()) open();
  call.sequence = sequence_;
  call.group = host_.id();
  if (!first_checked_ && size() > 1) {
    check_first_call(*config_.client, group_, call, config_.deadline);
  }
  first_checked_ = true;
  const std::string what =
      fmt::format("{} on the {} communicator of device {} (rank {} of {})", call.describe(),
                  factory_.name(), memory_.local_hardware_id, rank(), size());
  enqueue(watchdog_->communicator());
  std::function<bool()> done = queue_.fence();
  watchdog_->queued(sequence_, what, done, Clock::now());
  ++sequence_;
  wait(done, what, call.describe());
  ++completed_;
  if (config_.finished) config_.finished(op_name(call.op), call.sequence);
}

void DeviceGroup::open() {
  group_.generation = made_ ? group_.generation + 1 : 0;
  const auto make_id = [this] { return factory_.make_id(); };
  const std::string id =
      size() == 1 ? make_id()
                  : exchange_device_comm_id(*config_.client, group_, make_id, config_.deadline);
  std::unique_ptr<DeviceCommunicator> comm = factory_.make({id, rank(), size(), memory_, host_});
  DeviceCommunicator* made = comm.get();
  if (watchdog_) {
    watchdog_->rebuild(std::move(comm));
  } else {
    watchdog_ = std::make_unique<DeviceWatchdog>(std::move(comm), config_.deadline, config_.who);
    if (config_.period.count() > 0) watchdog_->start(config_.period);
  }
  made_ = true;
  failure_reported_ = false;
  first_checked_ = false;
  sequence_ = 0;
  // Creation may be non-blocking: every rank must join before the first collective.
  const std::string what = fmt::format("creating the {} communicator {} (generation {})",
                                       factory_.name(), group_.name, group_.generation);
  const auto joined = [made] { return made->poll().state != DeviceCommState::kInProgress; };
  watchdog_->queued(kCreation, what, joined, Clock::now());
  wait(joined, what, what);
}

void DeviceGroup::wait(const std::function<bool()>& done, const std::string& what,
                       const std::string& shown) {
  // As the host engine's waits: shown in the live view only once they last past ~20 ms.
  const auto show_after = Clock::now() + std::chrono::milliseconds(20);
  std::function<void()> unshow;
  struct Unshow {
    std::function<void()>& f;
    ~Unshow() {
      if (f) f();
    }
  } unshow_at_exit{unshow};
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    if (!unshow && config_.show_wait && Clock::now() >= show_after) {
      unshow = config_.show_wait(shown);
    }
    std::string report;
    if (config_.peer_dead && config_.peer_dead(&report)) watchdog_->peer_failed(-1, report, what);
    const bool finished = done();
    // One more round of the watchdog's checks after `done`: a communicator that failed as its
    // work ended (an aborted NCCL kernel ends too) leaves an error, not a result.
    if (watchdog_->check(Clock::now()) || watchdog_->tripped()) report_failure();
    if (finished) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

void DeviceGroup::report_failure() {
  failure_reported_ = true;
  try {
    watchdog_->rethrow();
  } catch (const DeadlineExceeded& e) {
    if (!config_.describe_others) throw;
    throw DeadlineExceeded(std::string(e.what()) + "." + config_.describe_others());
  }
}

}  // namespace spmd
