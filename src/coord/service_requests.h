// The requests of a formed cluster: the key-value store, barriers and the live-process query.
// Owns the store, the barrier table and the barriers' deadlines. Event loop only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "coord/barrier_table.h"
#include "coord/kv_store.h"
#include "coord/service_context.h"
#include "coord/service_status.h"

namespace spmd {

class Requests {
 public:
  using SessionPtr = ServiceContext::SessionPtr;

  // `view` shows each blocking wait while it lasts.
  Requests(ServiceContext& cx, LiveView& view);

  BarrierTable& barriers() { return barriers_; }
  const BarrierTable& barriers() const { return barriers_; }

  void on_kv_set(ServiceSession& session, uint64_t request_id, const wire::KvSetRequest& req);
  void on_kv_get(const SessionPtr& session, uint64_t request_id, const wire::KvGetRequest& req);
  // O(entries under the prefix).
  void on_kv_dir_get(ServiceSession& session, uint64_t request_id,
                     const wire::KvDirGetRequest& req);
  void on_kv_delete(ServiceSession& session, uint64_t request_id, const wire::KvDeleteRequest& req);
  void on_kv_increment(ServiceSession& session, uint64_t request_id,
                       const wire::KvIncrementRequest& req);
  void on_barrier(const SessionPtr& session, uint64_t request_id, const wire::BarrierRequest& req);
  // O(N): the answer lists every live process.
  void on_live_processes(ServiceSession& session, uint64_t request_id);
  // The service stops: no deadline fires any more.
  void stop() { barrier_deadlines_.clear(); }

 private:
  using Clock = ServiceContext::Clock;
  using milliseconds = ServiceContext::milliseconds;

  std::optional<Status> barrier_blocked(const wire::BarrierRequest& req) const;
  void arm_barrier_deadline(const BarrierTable::InstanceKey& key, milliseconds timeout);

  ServiceContext& cx_;
  LiveView& view_;
  KvStore kv_;
  BarrierTable barriers_;
  struct BarrierDeadline {
    std::unique_ptr<asio::steady_timer> timer;
    Clock::time_point deadline;
    milliseconds timeout{0};
  };
  // Pending barrier instances (id, generation) -> their deadline (arm_barrier_deadline).
  std::map<std::pair<std::string, uint64_t>, BarrierDeadline> barrier_deadlines_;
};

}  // namespace spmd
