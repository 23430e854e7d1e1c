// Prints what cluster detection reads from this process's environment (cluster_env.h), for
// k8s_test.py: "name=… id=… processes=… local=… coordinator=…", or "error: <what>" and exit 1.
#include <chrono>
#include <cstdio>
#include <exception>

#include "cluster/cluster_env.h"

int main() {
  try {
    const auto env = spmd::detect_cluster_env(std::nullopt, spmd::EnvReader());
    if (env == nullptr) {
      std::printf("error: no cluster environment detected\n");
      return 1;
    }
    const int id = *env->process_id();
    const int processes = *env->num_processes();
    const int local = env->local_process_id().value_or(-1);
    const std::string coordinator = *env->coordinator_address(std::chrono::seconds(5));
    std::printf("name=%s id=%d processes=%d local=%d coordinator=%s\n", env->name().c_str(), id,
                processes, local, coordinator.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
