// Saving in the background: the plan (with its copy of the shards) is made on the caller's
// thread, the writes and the commit protocol on a worker thread, one save at a time.
#include <spdlog/spdlog.h>

#include "checkpoint/save_plan.h"
#include "spmd/checkpoint.h"

namespace spmd::checkpoint {

AsyncCheckpointer::~AsyncCheckpointer() {
  try {
    join_and_collect();
  } catch (const std::exception& e) {
    spdlog::error("a background checkpoint save failed and nobody called wait_until_finished(): {}",
                  e.what());
  }
}

void AsyncCheckpointer::join_and_collect() {
  std::thread worker;
  {
    std::lock_guard lock(mu_);
    worker = std::move(worker_);
  }
  if (worker.joinable()) worker.join();
  std::lock_guard lock(mu_);
  running_ = false;
  if (error_) {
    const std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void AsyncCheckpointer::save_async(const std::string& dir, const Tree& tree,
                                   const SaveOptions& options) {
  join_and_collect();  // one save at a time, and the previous one's failure first
  const SaveOptions timed = with_timeout(options);
  // Begun here, on the caller's thread: from now on distributed::shutdown() waits for this save.
  std::shared_ptr<SessionWork> work = begin_save_work(dir, timed);
  const std::string key = pairing_key(dir);
  auto plan = std::make_shared<SavePlan>(plan_save(dir, tree, timed, true));
  std::lock_guard lock(mu_);
  running_ = true;
  worker_ = std::thread([this, plan, dir, timed, work, key] {
    try {
      execute_save(*plan, dir, timed, *work, key);
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mu_);
    running_ = false;
  });
}

void AsyncCheckpointer::wait_until_finished() { join_and_collect(); }

bool AsyncCheckpointer::in_progress() const {
  std::lock_guard lock(mu_);
  return running_;
}

}  // namespace spmd::checkpoint
