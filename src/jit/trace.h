// A trace in progress: the program being recorded while jit runs the user's function on Tensors
// (tensor.h). Tensors hold their trace; the trace is open only during the call that made it.
// Open to lib/: the trace in progress, which a library's functions record into (trace_of).
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "jit/program.h"
#include "spmd/mesh.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

class Trace : public std::enable_shared_from_this<Trace> {
 public:
  // A trace of a jit over `mesh` (its inputs'): on a mesh with Explicit axes, values carry their
  // sharding in their types (sharding_in_types.h).
  explicit Trace(std::optional<Mesh> mesh = std::nullopt) : mesh_(std::move(mesh)) {}
  // The jit's mesh, or null.
  const Mesh* mesh() const { return mesh_ ? &*mesh_ : nullptr; }

  // Appends `operation` on the values `inputs` and returns its result as a Tensor of this trace;
  // the result's type is the operation's shape and dtype rule's, with its sharding-in-types
  // rule's spec (typed_result). Throws InvalidArgument (or ShardingTypeError) from them.
  Tensor apply(std::shared_ptr<const Operation> operation, std::vector<int> inputs);
  const Op& op(int value) const { return program_.ops.at(static_cast<size_t>(value)); }
  Program& program() { return program_; }
  bool open() const { return open_; }
  void close() { open_ = false; }

  // The trace being recorded on this thread (for zeros(), asarray() …); throws InvalidArgument
  // naming `what` outside a jit trace.
  static std::shared_ptr<Trace> current(std::string_view what);
  // The same, or null outside a jit trace.
  static std::shared_ptr<Trace> current_or_null();

 private:
  friend class TraceScope;
  std::optional<Mesh> mesh_;
  Program program_;
  bool open_ = true;
};

// Makes `trace` the thread's current trace for its lifetime, then closes it.
class TraceScope {
 public:
  explicit TraceScope(std::shared_ptr<Trace> trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  std::shared_ptr<Trace> trace_;
  std::shared_ptr<Trace> previous_;
};

// The open trace all of `tensors` belong to; throws InvalidArgument naming `what` for an
// invalid Tensor, one whose jit call has returned, or Tensors of two different traces.
std::shared_ptr<Trace> trace_of(std::string_view what,
                                std::initializer_list<const Tensor*> tensors);

}  // namespace spmd::compiler
