// Step directories, cleanup of crashed saves, and the retention policy.
#include "spmd/checkpoint_manager.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/commit.h"
#include "checkpoint/json_text.h"
#include "checkpoint/orbax_checkpoint.h"
#include "checkpoint/save_lock.h"
#include "checkpoint/save_target.h"
#include "runtime/runtime_state.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::checkpoint {
namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

// A step's directory name as directory() writes it: "0", or digits without a leading zero, at
// most int64's largest value.
bool is_step_name(const std::string& name) {
  if (name.empty() || name.size() > 19 || (name.size() > 1 && name[0] == '0')) return false;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  return name.size() < 19 || name <= "9223372036854775807";
}

// Digits only, but not as directory() writes a step ("007", "0001", a 20-digit number).
bool looks_like_a_step(const std::string& name) {
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         !is_step_name(name);
}

// The step whose save left `name` ("12.tmp-…", "12.spmd-lock"), or nullopt.
std::optional<std::string> leftover_of(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos || !is_step_name(name.substr(0, dot))) return std::nullopt;
  const std::string rest = name.substr(dot);
  if (rest.rfind(".tmp-", 0) != 0 && rest != ".spmd-lock") return std::nullopt;
  return name.substr(0, dot);
}

// Removes what crashed saves and deletions of steps under `root` left, each step's under its save
// lock, so that a save in progress (another job's) keeps its files; a dead holder's lock is taken
// over (with a line saying so) and released. Failures are logged, never thrown.
void reclaim_step_leftovers(const std::string& root) {
  std::set<std::string> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (auto step = leftover_of(entry.path().filename().string())) steps.insert(*step);
  }
  for (const auto& step : steps) {
    try {
      const SaveTarget target = normalized_target((fs::path(root) / step).string());
      const auto lock = SaveLock::try_acquire(target, new_save_id());
      if (lock) reclaim_leftovers(target);
    } catch (const std::exception& e) {
      spdlog::warn("CheckpointManager: cannot reclaim what a crashed save of step {} left: {}",
                   step, e.what());
    }
  }
}

}  // namespace

CheckpointManager::CheckpointManager(std::string root, CheckpointManagerOptions options)
    : root_(std::move(root)), options_(std::move(options)) {
  if (options_.save_interval_steps <= 0) {
    throw InvalidArgument("CheckpointManager: save_interval_steps must be positive");
  }
  if (options_.keep_best && options_.best_metric.empty()) {
    throw InvalidArgument("CheckpointManager: keep_best needs best_metric");
  }
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) {
    throw Error(fmt::format("CheckpointManager: cannot create {}: {}", root_, ec.message()));
  }
}

std::string CheckpointManager::directory(int64_t step) const {
  return (fs::path(root_) / std::to_string(step)).string();
}

bool CheckpointManager::should_save(int64_t step) const {
  if (step < 0) throw InvalidArgument("CheckpointManager: steps are non-negative");
  // Asked at every step, so that the processes agree on the preemption step promptly.
  const bool preempted = multihost::reached_preemption_sync_point(step);
  return preempted || step % options_.save_interval_steps == 0;
}

bool CheckpointManager::save(int64_t step, const Tree& tree,
                             const std::map<std::string, double>& metrics,
                             const std::map<std::string, std::string>& user) {
  if (!should_save(step)) return false;
  if (process_index() == 0) reclaim_step_leftovers(root_);
  SaveOptions options = options_.save_options;
  options.metadata.step = step;
  options.metadata.metrics = metrics;
  options.metadata.user = user;
  checkpoint::save(directory(step), tree, options);
  prune(step);
  return true;
}

void CheckpointManager::remove_unkept(int64_t saved) const {
  const auto steps = all_steps();
  std::set<int64_t> keep = {saved};
  if (options_.max_to_keep) {
    const int n = std::max(*options_.max_to_keep, 0);
    for (size_t i = steps.size() > static_cast<size_t>(n) ? steps.size() - n : 0; i < steps.size();
         ++i) {
      keep.insert(steps[i]);
    }
  }
  if (options_.keep_best) {
    std::vector<std::pair<double, int64_t>> scored;
    for (int64_t s : steps) {
      const auto m = metadata(s).metrics;
      const auto it = m.find(options_.best_metric);
      if (it != m.end() && !std::isnan(it->second)) {
        scored.emplace_back(options_.best_mode_max ? -it->second : it->second, s);
      }
    }
    std::sort(scored.begin(), scored.end());
    for (size_t i = 0; i < scored.size() && i < static_cast<size_t>(*options_.keep_best); ++i) {
      keep.insert(scored[i].second);
    }
  }
  for (int64_t s : steps) {
    // Only steps spmd wrote (a COMMIT file): an Orbax step in the same directory is listed and
    // restored, never removed.
    if (!keep.count(s) && s < saved && !is_orbax_checkpoint(directory(s))) {
      remove_checkpoint(directory(s));
    }
  }
}

void CheckpointManager::prune(int64_t saved) {
  std::string error;
  if (process_index() == 0 && (options_.max_to_keep || options_.keep_best)) {
    try {
      remove_unkept(saved);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (process_count() > 1) {
    // Process 0's outcome goes to every process, which all raise the same error, so none waits
    // for a process that threw.
    auto& kv = distributed::client();
    const auto timeout = options_.save_options.timeout.value_or(wait_timeout());
    const std::string key = fmt::format("spmd/checkpoint/manager/{:016x}/{}",
                                        XXH3_64bits(root_.data(), root_.size()), prunes_++);
    if (process_index() == 0) {
      kv.key_value_set(key + "/outcome", json_text(json{{"error", error}}), true);
    } else {
      const json j =
          json::parse(kv.blocking_key_value_get(key + "/outcome", timeout), nullptr, false);
      error = j.is_object() && j.contains("error") && j["error"].is_string()
                  ? j["error"].get<std::string>()
                  : "process 0's outcome of pruning does not decode";
    }
    kv.wait_at_barrier(key + "/pruned", timeout);
    if (process_index() == 0) kv.key_value_delete(key);
  }
  if (!error.empty()) {
    throw Error(fmt::format(
        "CheckpointManager: step {} was committed, but removing the steps the policy no longer "
        "keeps failed on process 0: {}",
        saved, error));
  }
}

std::vector<int64_t> CheckpointManager::all_steps() const {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_step_name(name)) {
      if (is_committed(entry.path().string())) steps.push_back(std::stoll(name));
    } else if (looks_like_a_step(name)) {
      std::lock_guard lock(warned_mu_);
      if (warned_.insert(name).second) {
        spdlog::warn(
            "CheckpointManager: ignoring {}: not a step's name as this manager writes it (\"{}\" "
            "has leading zeros or exceeds int64)",
            entry.path().string(), name);
      }
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::optional<int64_t> CheckpointManager::latest_step() const {
  const auto steps = all_steps();
  if (steps.empty()) return std::nullopt;
  return steps.back();
}

Tree CheckpointManager::restore(int64_t step, const ShardingTree& targets) const {
  return checkpoint::restore(directory(step), targets);
}

Tree CheckpointManager::restore(int64_t step, const Sharding& sharding) const {
  return checkpoint::restore(directory(step), sharding);
}

Metadata CheckpointManager::metadata(int64_t step) const { return read_metadata(directory(step)); }

}  // namespace spmd::checkpoint
