// Collectives over named mesh axes, called inside the function shard_map or pmap runs on each
// device (jax.lax.psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute,
// axis_index, and axis_size).
//
// `axes` names one mesh axis ("dp") or a tuple of them ({"dp", "mp"}). The devices that share
// every other mesh coordinate form the group a call runs over; their positions in it are their
// axis_index() over the tuple, the first axis major. Every device of a group must make the same
// calls in the same order (the collectives engine's contract): a device that differs gets
// CollectiveMismatch naming both calls, one that never arrives DeadlineExceeded after
// SPMD_COLLECTIVE_TIMEOUT or PeerFailure when its process dies — never a silent hang.
//
// Every function throws InvalidArgument when called outside a shard_map/pmap function, for an
// axis the mesh lacks, or for shapes the operation cannot take (saying which). Results are
// bit-identical on every device of a group. Dimension arguments may be negative (counted from
// the end).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "spmd/block.h"
#include "spmd/partition_spec.h"

namespace spmd {

// The element-wise sum over the group; same shape and dtype as x, except bool, which counts in
// int32 as JAX's psum does. Over no axes (None), x.
Block psum(Block x, const AxisEntry& axes);
// psum divided by the group size, as JAX's: a floating x keeps its dtype; integers are summed in
// their dtype and divided into float32 (float64 for 64-bit integers); bool is counted in int32
// and gives the float32 fraction of true.
Block pmean(Block x, const AxisEntry& axes);
// The element-wise maximum / minimum over the group. A NaN on any device gives NaN, as
// jnp.maximum and one device's jnp.max do, so the answer does not depend on how the values are
// spread. (JAX 0.10.2 on CPU can lose a NaN in its cross-device max and min: pmax of
// [1, nan, 3, 2] and of [nan, 1, 3, 2] over 4 devices is 3, and jnp.max of [1, nan, 3, 2]
// split over 4 devices is 3 where one device's is NaN. spmd keeps the one-device answer.)
Block pmax(Block x, const AxisEntry& axes);
Block pmin(Block x, const AxisEntry& axes);

// Every device's x, in axis_index order, stacked along a new dimension `axis` (size n, the
// group size) — or, when `tiled`, concatenated along the existing dimension `axis`.
Block all_gather(const Block& x, const AxisEntry& axes, int axis = 0, bool tiled = false);

// The sum over the group, scattered along `scatter_dimension`: device i keeps piece i. Without
// `tiled` that dimension's size must equal n and the result drops it; with `tiled` it must be
// divisible by n and shrinks to size / n.
Block psum_scatter(const Block& x, const AxisEntry& axes, int scatter_dimension = 0,
                   bool tiled = false);

// x is cut into n pieces along `split_axis`; piece j goes to the device at axis index j, and the
// pieces received are joined along `concat_axis`, in axis_index order. Without `tiled`, x's
// split_axis size must equal n, the result drops that dimension and gains one of size n at
// concat_axis (np.insert(np.delete(x.shape, split_axis), concat_axis, n)); with `tiled` the
// split size must be divisible by n and no dimension is added or removed.
Block all_to_all(const Block& x, const AxisEntry& axes, int split_axis, int concat_axis,
                 bool tiled = false);

// For each (source, target) pair of axis indices, target's result is source's x; devices that
// are no target get zeros. Each index is a source at most once and a target at most once. The
// indices are axis_index(axes) over the tuple as given, the first axis major. (JAX 0.10.2 numbers
// ppermute's pairs in the mesh's axis order whatever the tuple's order, while its axis_index
// follows the tuple: over ('b', 'a') of a 2 x 2 mesh its pair (1, 2) moves device 1 to device 2
// although axis_index calls them 2 and 1. spmd keeps one numbering, axis_index's, so that
// (axis_index(axes), …) always names this device; over one axis, or a tuple in mesh order, the
// two agree.)
Block ppermute(const Block& x, const AxisEntry& axes, const std::vector<std::pair<int, int>>& perm);

// This device's position along `axes` (linear over a tuple, the first axis major), and the
// number of devices along them.
int64_t axis_index(const AxisEntry& axes);
int64_t axis_size(const AxisEntry& axes);

}  // namespace spmd
