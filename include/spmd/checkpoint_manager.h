// spmd::checkpoint::CheckpointManager — numbered checkpoints of a training run under one root
// directory (<root>/<step>), with a retention policy (Orbax's CheckpointManager).
//
// Only committed steps exist for it, under the names directory() writes ("7"; "007" or "0007" are
// not steps and are ignored with a warning): a step whose save crashed is invisible, and the next
// save removes what it left (recognised by its save marker, and only where no live save holds
// that step's lock). Old steps are deleted only after a newer one is committed, and a step is
// marked and renamed away before its files go, so a reader never sees one half-deleted.
//
// Thread safety: one manager per root per process; calls are collective where marked.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spmd/checkpoint.h"

namespace spmd::checkpoint {

struct CheckpointManagerOptions {
  // The policy keeps the newest `max_to_keep` committed steps and the best `keep_best` ones, and
  // deletes every older step that neither keeps; with neither set, every step stays. The step
  // just saved always stays.
  std::optional<int> max_to_keep;
  // The best by the metric `best_metric`: lowest, or highest with best_mode_max. Steps without
  // that metric count only for recency.
  std::optional<int> keep_best;
  std::string best_metric;
  bool best_mode_max = false;
  // save() saves only steps that are multiples of this.
  int64_t save_interval_steps = 1;
  SaveOptions save_options;
};

class CheckpointManager {
 public:
  // Creates `root` if needed. Throws InvalidArgument for a non-positive save interval or
  // keep_best without a best_metric.
  explicit CheckpointManager(std::string root, CheckpointManagerOptions options = {});

  // Whether save(step, …) saves: at the save interval, and at the step every process agreed to
  // save at after a preemption signal (multihost::reached_preemption_sync_point, which this asks
  // at every call, as Orbax's should_save does). Collective in the same way. Its first call
  // installs the preemption signal's handler (multihost.h): from then on a first SIGTERM no
  // longer ends the process by itself, so a loop that saves with a manager should also stop when
  // reached_preemption_sync_point(step) says so (a second SIGTERM still ends it). Throws
  // InvalidArgument for a negative step.
  bool should_save(int64_t step) const;

  // Saves `tree` as step `step` with `metrics` and `user` metadata (collective) when
  // should_save(step); returns whether it saved. Then removes what crashed saves left and the steps
  // the policy no longer keeps (process 0; every process returns after it). Throws AlreadyExists
  // for a step already saved, and what checkpoint::save throws; an error removing old steps
  // (after the new one is committed) is sent to every process, which all throw it.
  //
  // The data loader's position goes with the step this way, so that a restored run also resumes
  // its data where it was:
  //   manager.save(step, tree, {{"loss", loss}}, {{"data_loader", loader.state()}});
  //   loader.restore(manager.metadata(step).user.at("data_loader"));
  bool save(int64_t step, const Tree& tree, const std::map<std::string, double>& metrics = {},
            const std::map<std::string, std::string>& user = {});

  // A nested tree (tree.h), saved by its paths; restore(...) then tree_from_paths gives it back.
  template <class A>
  requires std::same_as<A, Array>
  bool save(int64_t step, const spmd::Tree<A>& tree,
            const std::map<std::string, double>& metrics = {},
            const std::map<std::string, std::string>& user = {}) {
    return save(step, tree_to_paths(tree), metrics, user);
  }
  // The committed steps, ascending; the newest.
  std::vector<int64_t> all_steps() const;
  std::optional<int64_t> latest_step() const;

  // Restores step `step` (see checkpoint::restore). Throws FailedPrecondition for a step that is
  // not committed.
  Tree restore(int64_t step, const ShardingTree& targets) const;
  Tree restore(int64_t step, const Sharding& sharding) const;
  Metadata metadata(int64_t step) const;

  // The directory of step `step`.
  std::string directory(int64_t step) const;

 private:
  void prune(int64_t saved);
  void remove_unkept(int64_t saved) const;

  std::string root_;
  CheckpointManagerOptions options_;
  uint64_t prunes_ = 0;  // numbers prune()'s agreement among the processes
  mutable std::mutex warned_mu_;
  mutable std::set<std::string> warned_;  // names all_steps() warned about once
};

}  // namespace spmd::checkpoint
