// What a named-axis collective needs to know about the device whose thread calls it: set by
// shard_map (and pmap) around each call of the user's function, on that device's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compute/axis_groups.h"
#include "spmd/partition_spec.h"

namespace spmd {

struct AxisContext {
  AxisGroups* groups = nullptr;
  int device_id = 0;
  std::vector<int64_t> coords;  // the device's mesh coordinates
};

// The calling thread's context. Throws InvalidArgument saying that `what` runs only inside the
// function of shard_map or pmap when there is none.
const AxisContext& current_axis_context(const char* what);

// True on a thread running a shard_map or pmap function.
bool in_axis_context();

// Makes `context` the calling thread's for its lifetime.
class AxisContextScope {
 public:
  explicit AxisContextScope(const AxisContext& context);
  ~AxisContextScope();
  AxisContextScope(const AxisContextScope&) = delete;
  AxisContextScope& operator=(const AxisContextScope&) = delete;

 private:
  const AxisContext* previous_;
};

// A named axis resolved for the calling device: its communicator (made on first use), this
// device's index along the axes, and their size.
struct ResolvedAxes {
  std::vector<int> dims;
  int64_t index = 0;
  int64_t size = 1;
};
ResolvedAxes resolve_axes(const AxisContext& context, const AxisEntry& axes, const char* what);
Communicator axes_communicator(const AxisContext& context, const std::vector<int>& dims);

}  // namespace spmd
