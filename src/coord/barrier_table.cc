#include "coord/barrier_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace spmd {

std::string format_process_list(const std::vector<int>& ids, size_t limit) {
  if (ids.size() <= limit) return fmt::format("{}", fmt::join(ids, ", "));
  return fmt::format("{} … and {} more",
                     fmt::join(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(limit), ", "),
                     ids.size() - limit);
}

bool BarrierTable::is_participant(const Instance& instance, int process) const {
  if (instance.participants.empty()) return process >= 0 && process < num_processes_;
  return std::binary_search(instance.participants.begin(), instance.participants.end(), process);
}

size_t BarrierTable::participant_count(const Instance& instance) const {
  return instance.participants.empty() ? static_cast<size_t>(num_processes_)
                                       : instance.participants.size();
}

std::string BarrierTable::describe(const std::vector<int>& participants) const {
  if (participants.empty()) return fmt::format("all {} processes", num_processes_);
  return "[" + format_process_list(participants) + "]";
}

std::optional<BarrierTable::InstanceKey> BarrierTable::arrive(const std::string& id, int process,
                                                              const std::vector<int>& requested,
                                                              Done done) {
  std::vector<int> participants = requested;
  std::sort(participants.begin(), participants.end());
  if (!participants.empty() &&
      (std::adjacent_find(participants.begin(), participants.end()) != participants.end() ||
       participants.front() < 0 || participants.back() >= num_processes_)) {
    done({StatusCode::kInvalidArgument,
          fmt::format("barrier '{}': process ids [{}] must be distinct and in 0..{}", id,
                      format_process_list(participants), num_processes_ - 1)});
    return std::nullopt;
  }
  // A list naming every process is the same barrier as an empty one.
  if (participants.size() == static_cast<size_t>(num_processes_)) participants.clear();
  {
    Instance probe;
    probe.participants = participants;
    if (!is_participant(probe, process)) {
      done({StatusCode::kInvalidArgument,
            fmt::format("barrier '{}': process {} waits at it but is not among its processes {}",
                        id, process, describe(participants))});
      return std::nullopt;
    }
  }

  auto& generations = instances_[id];
  uint64_t& count = arrivals_[{id, process}];
  // An earlier instance this process joined that is still pending means a second thread.
  if (count > 0) {
    auto prev = generations.find(count - 1);
    if (prev != generations.end() && !prev->second.failed &&
        prev->second.waiters.count(process) > 0) {
      done({StatusCode::kFailedPrecondition,
            fmt::format("barrier '{}' is already in progress in process {}: one barrier id cannot "
                        "be waited on twice at once; use distinct ids for concurrent barriers",
                        id, process)});
      return std::nullopt;
    }
  }
  const uint64_t generation = count;
  auto [it, created] = generations.try_emplace(generation);
  Instance& instance = it->second;
  if (created) instance.participants = participants;
  if (instance.failed) {
    ++count;
    done(instance.failure);
    return std::nullopt;
  }
  if (instance.participants != participants) {
    done({StatusCode::kInvalidArgument,
          fmt::format("barrier '{}': process {} lists processes {} but earlier arrivals listed "
                      "{}; every participant must pass the same list",
                      id, process, describe(participants), describe(instance.participants))});
    return std::nullopt;
  }
  ++count;
  instance.waiters.emplace(process, std::move(done));
  if (instance.waiters.size() < participant_count(instance)) return InstanceKey{id, generation};

  auto waiters = std::move(instance.waiters);
  generations.erase(it);
  for (auto& [p, waiter] : waiters) waiter(Status{});
  settle(id, generation);
  return std::nullopt;
}

std::vector<int> BarrierTable::missing(const InstanceKey& key) const {
  std::vector<int> out;
  auto id_it = instances_.find(key.id);
  if (id_it == instances_.end()) return out;
  auto it = id_it->second.find(key.generation);
  if (it == id_it->second.end() || it->second.failed) return out;
  for (int p = 0; p < num_processes_; ++p) {
    if (is_participant(it->second, p) && it->second.waiters.count(p) == 0) out.push_back(p);
  }
  return out;
}

uint64_t BarrierTable::arrivals(const std::string& id, int process) const {
  auto it = arrivals_.find({id, process});
  return it == arrivals_.end() ? 0 : it->second;
}

void BarrierTable::expire(const InstanceKey& key, const std::string& waited, const Describe& now) {
  auto id_it = instances_.find(key.id);
  if (id_it == instances_.end()) return;
  auto it = id_it->second.find(key.generation);
  if (it == id_it->second.end() || it->second.failed) return;
  Instance& instance = it->second;
  const std::vector<int> absent = missing(key);
  fail(key.id, key.generation, instance,
       {StatusCode::kDeadlineExceeded,
        fmt::format("barrier '{}' timed out after {}: {} of {} processes arrived; missing "
                    "processes: {}. Check that every process reaches this barrier (seed pitfalls: "
                    "a process that left a loop early, or took another branch).{}",
                    key.id, waited, instance.waiters.size(), participant_count(instance),
                    format_process_list(absent), now ? now(absent) : "")});
}

void BarrierTable::fail_process(int process, StatusCode code, const std::string& message) {
  for (auto& [id, generations] : instances_) {
    for (auto& [generation, instance] : generations) {
      if (instance.failed) continue;
      if (!is_participant(instance, process)) continue;
      fail(id, generation, instance,
           {code, fmt::format("barrier '{}' cannot complete: {}", id, message)});
    }
  }
}

void BarrierTable::fail(const std::string& id, uint64_t generation, Instance& instance,
                        const Status& status) {
  instance.failed = true;
  instance.failure = status;
  auto waiters = std::move(instance.waiters);
  instance.waiters.clear();
  for (auto& [p, waiter] : waiters) waiter(status);
  settle(id, generation);
}

size_t BarrierTable::pending_count() const {
  size_t n = 0;
  for (const auto& [id, generations] : instances_) {
    for (const auto& [g, instance] : generations) n += instance.failed ? 0 : 1;
  }
  return n;
}

}  // namespace spmd
