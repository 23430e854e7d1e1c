// The environment spmdrun (and anyone launching by hand) sets: SPMD_* variables.

#include "cluster/cluster_env.h"

namespace spmd {
namespace {

class SpmdEnv : public ClusterEnv {
 public:
  explicit SpmdEnv(EnvReader env) : env_(std::move(env)) {}

  std::string name() const override { return "env"; }
  std::vector<std::string> marker_variables() const override {
    return {"SPMD_COORDINATOR_ADDRESS", "SPMD_NUM_PROCESSES", "SPMD_PROCESS_ID"};
  }
  bool is_present() const override {
    for (const auto& v : marker_variables()) {
      if (env_.has(v)) return true;
    }
    return false;
  }
  std::optional<std::string> coordinator_address(std::chrono::milliseconds) const override {
    return env_.get("SPMD_COORDINATOR_ADDRESS");
  }
  std::optional<int> num_processes() const override {
    return env_.get_int("SPMD_NUM_PROCESSES", 1, kMaxInt);
  }
  std::optional<int> process_id() const override {
    return env_.get_int("SPMD_PROCESS_ID", 0, kMaxInt);
  }
  std::optional<int> local_process_id() const override {
    return env_.get_int("SPMD_LOCAL_PROCESS_ID", 0, kMaxInt);
  }
  std::optional<std::vector<int>> local_device_ids() const override {
    return env_.get_int_list("SPMD_LOCAL_DEVICE_IDS", 0, kMaxInt);
  }

 private:
  EnvReader env_;
};

}  // namespace

std::unique_ptr<ClusterEnv> make_spmd_env(EnvReader env) {
  return std::make_unique<SpmdEnv>(std::move(env));
}

}  // namespace spmd
