// Starting the worker processes of a multi-process benchmark and collecting the JSON rows the
// first one prints.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace spmd::bench {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The directory of the running spmd-bench (its workers live beside it).
std::filesystem::path self_dir();

// The Python that runs the JAX and Python workers: SPMD_BENCH_PYTHON when set (a machine the
// programs were carried to, such as a lent GPU's, with its own JAX), else the build tree's
// virtual environment.
const std::string& bench_python();

// True when `program` is an executable file in some PATH directory.
bool on_path(const std::string& program);

// Starts one process per entry of `argvs` (with `envs`), waits for all (20 minutes at most, then
// kills them), and returns the lines starting with '{' that the first one printed; its other
// lines go to stderr, and a worker that fails is reported there.
std::vector<std::string> run_workers(const std::vector<std::vector<std::string>>& argvs,
                                     const std::vector<EnvList>& envs);

// The environment of process `id` of an `n`-process spmd job with its coordinator at `address`.
EnvList spmd_worker_env(const std::string& address, int n, int id);

// The median of `v` (not empty).
double median(std::vector<double> v);

// The seconds `f` takes.
double seconds_of(const std::function<void()>& f);
// The median of `iterations` timings of `f`, after one untimed warm-up call.
double timed(int iterations, const std::function<void()>& f);
// timed() for two pieces of work side by side: each iteration times both, in turn first, so
// that neither always runs in the other's wake (caches, another library's spinning threads).
// Returns the medians of f's and g's timings.
std::pair<double, double> timed_side_by_side(int iterations, const std::function<void()>& f,
                                             const std::function<void()>& g);

// Runs `f` between two barriers of every process of the job (ids `id`/start and `id`/end, at most
// 10 minutes each) and returns the seconds from the first to the second: the slowest process's
// time for the phase.
double timed_phase(const std::string& id, const std::function<void()>& f);

// Prints `row` as one line of JSON and flushes it, on process 0 only: the row run_spmd_job
// collects.
void print_row(const nlohmann::ordered_json& row);

// Runs `argv` as the `processes` processes of one spmd job on this machine (its coordinator on a
// free loopback port; `env` added to each one's spmd_worker_env) and returns the JSON rows the
// first one printed (empty when the job failed, reported on stderr).
std::vector<std::string> job_rows(int processes, const std::vector<std::string>& argv,
                                  const EnvList& env);

// Runs `processes` spmd-bench processes with `worker_args` (the internal worker subcommand and
// its options) as one spmd job on this machine and returns the JSON rows the first one printed
// (empty when the job failed, reported on stderr).
std::vector<std::string> spmd_job_rows(int processes, const std::vector<std::string>& worker_args);

// Runs `processes` spmd-bench processes with `worker_args` (the internal worker subcommand and
// its options) as one spmd job on this machine, prints the first one's JSON row (after `title`
// unless `json`), and returns 0 when the row says "correct": true, 1 otherwise.
int run_spmd_job(int processes, const std::vector<std::string>& worker_args,
                 const std::string& title, bool json);

// A directory for a benchmark's files: `requested`, or a new one under the system's temporary
// directory named after `prefix`, removed with everything in it when this object goes.
class ScratchDir {
 public:
  ScratchDir(const std::string& requested, const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool made_ = false;
};

}  // namespace spmd::bench
