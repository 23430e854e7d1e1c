// spmd-bench's Python side: the build tree's Python with JAX from PyPI (installed there when
// missing), jobs of jax_worker.py processes doing the work the spmd rows do (one CPU device per
// process, multi-process through jax.distributed.initialize with Gloo collectives), and the
// collectives' picture (matplotlib).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spmd::bench {

// True when the build tree's Python imports `module`. When it does not, installs the pinned
// packages of `requirements` into the build tree's venv first, making the venv when there is
// none, as `make venv` does (each step within 15 minutes). False, having said why on stderr, when
// that fails.
bool ensure_python_module(const std::string& module, const std::string& requirements);
// ensure_python_module("jax", the tests' pinned requirements), asked once per process once it
// has answered true.
bool ensure_jax();

// One figure of a side-by-side run: spmd's field and JAX's. A time ratio is spmd's over JAX's
// (below 1: spmd faster); a speed ratio is JAX's over spmd's (above 1: spmd faster).
struct JaxRatio {
  std::string name;
  std::string spmd_field;
  std::string jax_field;
  bool speed = true;
};

// `rounds` rounds, each spmd's job then JAX's (each returning its row; null when it did not run),
// so that a slow period of the machine falls on both. The result holds, per ratio, its rounds
// and their median, the median of each side's field, and the last rounds' rows under "spmd" and
// "jax"; "correct" is spmd's rows' own. Null when spmd's job failed.
nlohmann::ordered_json side_by_side(int rounds, const std::function<nlohmann::json()>& spmd,
                                    const std::function<nlohmann::json()>& jax,
                                    const std::vector<JaxRatio>& ratios);

// A benchmark beside JAX: side_by_side of the spmd job of `spmd_worker` (spmd-bench's worker
// arguments) and the JAX job of `jax_mode` `jax_args`, both on `processes` processes; `check`
// (when given) may add to the row and clear its "correct". Prints `title` (unless `json`) and
// the row; returns 0 when it is correct.
int run_beside_jax(const std::string& title, int processes,
                   const std::vector<std::string>& spmd_worker, const std::string& jax_mode,
                   const std::vector<std::string>& jax_args, int rounds, bool json,
                   const std::vector<JaxRatio>& ratios,
                   const std::function<void(nlohmann::ordered_json&)>& check = {});

// Draws `rows` (JSON lines of `spmd-bench collectives`, memcpy's included) into `png` with
// plot_collectives.py (matplotlib, from tools/spmd-bench/requirements.txt when missing). False,
// having said why, when it could not.
bool plot_collectives(const std::vector<std::string>& rows, const std::string& png);

// Starts `processes` jax_worker.py processes `mode ADDRESS N RANK args…` (rank i pinned to core i
// when `bind`) and returns the JSON lines rank 0 printed; empty, having said why, when JAX is not
// there or a process failed.
// The platform JAX's processes run on (JAX_PLATFORMS): "cpu" unless set, for every later job.
void set_jax_platform(const std::string& platform);

std::vector<std::string> run_jax_job(int processes, const std::string& mode,
                                     const std::vector<std::string>& args, bool bind);

}  // namespace spmd::bench
