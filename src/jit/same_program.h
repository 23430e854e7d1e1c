// The check that every process of a mesh traced the same program (jit.h, "The same program
// everywhere"): one all_gather of 64-bit fingerprints over the mesh; on a difference, the two
// programs' text through the coordination service, to name the first operation that differs.
#pragma once

#include <string>

#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// Collective over the processes owning devices of `mesh`. Throws CollectiveMismatch in every
// process when the fingerprints differ, naming two processes and the first operation where
// their programs do.
// Also throws InvalidArgument in every process when some process reported a failed trace
// (report_failed_trace), naming it and quoting its error.
void check_same_program(const Program& program, const Mesh& mesh, const std::string& name);

// For a process whose trace or partitioning of jit(`name`) threw `error`: takes part in the
// check's all_gather with a fingerprint that says so and publishes the error, so that the other
// processes raise at once instead of waiting for this one until their deadline. Collective, like
// check_same_program; never throws (the caller rethrows its own error).
void report_failed_trace(const Mesh& mesh, const std::string& name, const std::string& error);

}  // namespace spmd::compiler
