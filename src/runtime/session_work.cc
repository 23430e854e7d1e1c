// The registry of a session's work in flight, and SessionWork's own half (begin() is in
// runtime.cc, beside the state it reads).
#include "runtime/session_work.h"

#include <algorithm>

#include "coord/coord_client.h"
#include "runtime/io_thread.h"
#include "spmd/error.h"

namespace spmd {

uint64_t WorkRegistry::add(std::string what, Clock::time_point due) {
  std::lock_guard lock(mu_);
  const uint64_t id = next_id_++;
  entries_.emplace(id, Entry{std::move(what), due});
  return id;
}

void WorkRegistry::set_due(uint64_t id, Clock::time_point due) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(id);
  if (it != entries_.end()) it->second.due = due;
  changed_.notify_all();
}

void WorkRegistry::remove(uint64_t id) {
  std::lock_guard lock(mu_);
  entries_.erase(id);
  changed_.notify_all();
}

std::vector<std::string> WorkRegistry::wait_until_done_or_due() {
  std::unique_lock lock(mu_);
  while (!entries_.empty()) {
    Clock::time_point latest = Clock::time_point::min();
    for (const auto& [id, e] : entries_) latest = std::max(latest, e.due);
    if (Clock::now() >= latest) break;
    changed_.wait_until(lock, latest);
  }
  std::vector<std::string> left;
  for (const auto& [id, e] : entries_) left.push_back(e.what);
  return left;
}

bool WorkRegistry::wait_until_empty(Clock::time_point until) {
  std::unique_lock lock(mu_);
  return changed_.wait_until(lock, until, [&] { return entries_.empty(); });
}

SessionWork::SessionWork(std::shared_ptr<WorkRegistry> registry, uint64_t id, int process_index,
                         int process_count, std::shared_ptr<IoThread> io,
                         std::shared_ptr<CoordClient> coord)
    : registry_(std::move(registry)),
      id_(id),
      process_index_(process_index),
      process_count_(process_count),
      io_(std::move(io)),
      client_(coord ? std::make_unique<distributed::Client>(std::move(coord)) : nullptr) {}

SessionWork::~SessionWork() {
  client_.reset();  // before io_, whose thread its connection runs on
  if (registry_) registry_->remove(id_);
}

distributed::Client& SessionWork::client() {
  if (!client_) {
    throw FailedPrecondition(
        "this process runs alone, so there is no coordination service to talk to");
  }
  return *client_;
}

void SessionWork::extend(std::chrono::milliseconds timeout) {
  if (registry_) registry_->set_due(id_, WorkRegistry::Clock::now() + timeout);
}

}  // namespace spmd
