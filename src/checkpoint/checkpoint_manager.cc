// Step directories, cleanup of crashed saves, and the retention policy.
#include "spmd/checkpoint_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "checkpoint/commit.h"
#include "runtime/runtime_state.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::checkpoint {
namespace fs = std::filesystem;

namespace {

bool is_step_name(const std::string& name) {
  return !name.empty() && name.size() <= 18 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Removes `<step>.tmp-*` and `<step>.deleting-*` under `root`: what crashed saves and deletions
// left. Committed steps are plain numbers and never match.
void remove_leftovers(const std::string& root) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t dot = name.find('.');
    if (dot == std::string::npos || !is_step_name(name.substr(0, dot))) continue;
    const std::string rest = name.substr(dot);
    if (rest.rfind(".tmp-", 0) == 0 || rest.rfind(".deleting-", 0) == 0) {
      fs::remove_all(entry.path(), ec);
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
  if (process_index() == 0) remove_leftovers(root_);
  SaveOptions options = options_.save_options;
  options.metadata.step = step;
  options.metadata.metrics = metrics;
  options.metadata.user = user;
  checkpoint::save(directory(step), tree, options);
  prune(step);
  return true;
}

void CheckpointManager::prune(int64_t saved) {
  if (process_index() == 0 && (options_.max_to_keep || options_.keep_best)) {
    const auto steps = all_steps();
    std::set<int64_t> keep = {saved};
    if (options_.max_to_keep) {
      const int n = std::max(*options_.max_to_keep, 0);
      for (size_t i = steps.size() > static_cast<size_t>(n) ? steps.size() - n : 0;
           i < steps.size(); ++i) {
        keep.insert(steps[i]);
      }
    }
    if (options_.keep_best) {
      std::vector<std::pair<double, int64_t>> scored;
      for (int64_t s : steps) {
        const auto m = metadata(s).metrics;
        const auto it = m.find(options_.best_metric);
        if (it != m.end())
          scored.emplace_back(options_.best_mode_max ? -it->second : it->second, s);
      }
      std::sort(scored.begin(), scored.end());
      for (size_t i = 0; i < scored.size() && i < static_cast<size_t>(*options_.keep_best); ++i) {
        keep.insert(scored[i].second);
      }
    }
    for (int64_t s : steps) {
      if (!keep.count(s) && s < saved) remove_checkpoint(directory(s));
    }
  }
  if (process_count() > 1) {
    distributed::client().wait_at_barrier("spmd/checkpoint/pruned",
                                          options_.save_options.timeout.value_or(wait_timeout()));
  }
}

std::vector<int64_t> CheckpointManager::all_steps() const {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_step_name(name) && is_committed(entry.path().string()))
      steps.push_back(std::stoll(name));
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
