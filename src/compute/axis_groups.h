// The communicators behind a mesh's named axes: for a tuple of mesh axes, the devices that share
// every other mesh coordinate form one group, ranked by their linear index over the tuple (the
// first axis major), which is what axis_index() returns. Made on first use — collective among
// the processes of each group, in one global order so that no two processes wait on each other
// — and kept for the runtime session.
//
// Thread-safe: every local device's thread asks for its own communicator.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "spmd/communicator.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"

namespace spmd {

class AxisGroups {
 public:
  explicit AxisGroups(Mesh mesh);

  const Mesh& mesh() const { return mesh_; }

  // The mesh dimensions of `axes` in the order given. Throws InvalidArgument, starting with
  // `what`, for an axis the mesh lacks (listing the mesh's axes) or one named twice.
  std::vector<int> dims(const AxisEntry& axes, const std::string& what) const;

  // The linear index over `dims` of the device at mesh coordinates `coords`, and the number of
  // devices along `dims`.
  int64_t index(const std::vector<int64_t>& coords, const std::vector<int>& dims) const;
  int64_t size(const std::vector<int>& dims) const;

  // The communicator over `dims` of device `device_id` (one of this process's mesh devices).
  // The first call for `dims` creates every group of this process's devices (collective; throws
  // like make_communicators).
  Communicator communicator(const std::vector<int>& dims, int device_id);

  // Closes every communicator made so far (their waiting calls throw FailedPrecondition quoting
  // `why`) and forgets them. Until reopen(), communicator() throws the same error instead of
  // making new ones: a device thread of the failed call that reaches another collective must not
  // create a group the other processes will not create (their counts of groups made would then
  // differ, and so would the next group's id, and both would wait for each other).
  void close(const std::string& why);
  // After the failed call has ended on every device: the next use makes new communicators.
  void reopen();

 private:
  Mesh mesh_;
  std::mutex create_mu_;  // held while groups are made (collective, may wait for other processes)
  std::mutex mu_;         // guards made_ and closed_
  std::optional<std::string> closed_;  // why, between close() and reopen()
  std::map<std::vector<int>, std::map<int, Communicator>> made_;  // dims -> device id -> handle
};

// The AxisGroups of `mesh` for this runtime session: one per distinct mesh.
std::shared_ptr<AxisGroups> axis_groups_for(const Mesh& mesh);

}  // namespace spmd
