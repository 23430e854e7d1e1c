// Starting the worker processes of a multi-process benchmark and collecting the JSON rows the
// first one prints.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace spmd::bench {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The directory of the running spmd-bench (its workers live beside it).
std::filesystem::path self_dir();

// True when `program` is an executable file in some PATH directory.
bool on_path(const std::string& program);

// Starts one process per entry of `argvs` (with `envs`), waits for all (20 minutes at most, then
// kills them), and returns the lines starting with '{' that the first one printed; its other
// lines go to stderr, and a worker that fails is reported there.
std::vector<std::string> run_workers(const std::vector<std::vector<std::string>>& argvs,
                                     const std::vector<EnvList>& envs);

// The environment of process `id` of an `n`-process spmd job with its coordinator at `address`.
EnvList spmd_worker_env(const std::string& address, int n, int id);

}  // namespace spmd::bench
