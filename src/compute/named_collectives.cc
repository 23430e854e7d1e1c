// The named-axis collectives: each resolves its axes to the calling device's communicator and
// maps onto one call of the collectives engine, rearranging the block around it when a
// dimension other than the first is split or joined.
#include "spmd/named_collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/axis_context.h"
#include "compute/block_layout.h"
#include "compute/device_route.h"
#include "compute/ops/block_kernels.h"
#include "compute/psum_then.h"
#include "kernels/elementwise.h"
#include "spmd/error.h"

namespace spmd {
namespace {

std::string describe(const Block& b) {
  return fmt::format("{}[{}]", dtype_name(b.dtype()), fmt::join(b.shape(), ", "));
}

// `dim` in [-(rank), rank) (or [-(rank+1), rank] when `inserting`), made non-negative.
int normalized(const char* what, const char* name, int dim, const Block& x, bool inserting) {
  const int rank = x.rank() + (inserting ? 1 : 0);
  if (dim < -rank || dim >= rank) {
    throw InvalidArgument(fmt::format("{}: {} {} is outside a block of rank {} ({})", what, name,
                                      dim, x.rank(), describe(x)));
  }
  return dim < 0 ? dim + rank : dim;
}

int64_t product(const Shape& shape, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= shape[i];
  return p;
}

// Runs the engine call `f`, naming the collective in the user's terms in a mismatch or timeout
// ("psum over ('x'): collective mismatch: …"), so the message points at the line that differs.
template <class F>
void engine_call(const char* what, const AxisEntry& axes, F&& f) {
  try {
    f();
  } catch (const CollectiveMismatch& e) {
    throw CollectiveMismatch(
        fmt::format("{} over ('{}'): {}", what, fmt::join(axes.axes(), "', '"), e.what()));
  } catch (const DeadlineExceeded& e) {
    throw DeadlineExceeded(
        fmt::format("{} over ('{}'): {}", what, fmt::join(axes.axes(), "', '"), e.what()));
  }
}

Block reduce(const char* what, Block x, const AxisEntry& axes, ReduceOp op) {
  const AxisContext& context = current_axis_context(what);
  const ResolvedAxes r = resolve_axes(context, axes, what);
  if (r.size == 1) return x;  // one device along the axes: nothing to combine
  Communicator c = axes_communicator(context, r.dims);
  if (x.owns_exclusively()) {
    const auto buf = x.mutable_bytes();
    engine_call(what, axes, [&] {
      c.all_reduce(x.dtype(), buf.data(), buf.data(), static_cast<size_t>(x.size()), op);
    });
    return x;
  }
  Block out = Block::uninitialized(x.dtype(), x.shape());
  engine_call(what, axes, [&] {
    c.all_reduce(x.dtype(), x.bytes().data(), out.mutable_bytes().data(),
                 static_cast<size_t>(x.size()), op);
  });
  return out;
}

// x's pieces along `dim`, n of them, laid out one after another (for the engine's scatter and
// all-to-all, which take piece j for device j from position j): a copy unless `dim` is the
// first non-trivial one.
Block pieces_first(const Block& x, int dim, int64_t n) {
  const int64_t outer = product(x.shape(), 0, dim);
  if (outer == 1 || n == 1) return x;
  Block out = Block::uninitialized(x.dtype(), x.shape());
  const size_t inner =
      static_cast<size_t>(product(x.shape(), dim, x.shape().size()) / n) * dtype_size(x.dtype());
  deinterleave(x.bytes().data(), out.mutable_bytes().data(), n, outer, inner);
  return out;
}

// n blocks of `shape`, one after another in `stacked`, joined at dimension `dim` of `shape`:
// the result has `out_shape`, and each block's rows of prod(shape[dim:]) elements alternate.
Block join_at(const Block& stacked, const Shape& shape, int dim, int64_t n, Shape out_shape) {
  const int64_t outer = product(shape, 0, dim);
  if (outer == 1 || n == 1) return stacked.reshape(std::move(out_shape));
  Block out = Block::uninitialized(stacked.dtype(), std::move(out_shape));
  const size_t inner =
      static_cast<size_t>(product(shape, dim, shape.size())) * dtype_size(stacked.dtype());
  interleave(stacked.bytes().data(), out.mutable_bytes().data(), n, outer, inner);
  return out;
}

// Throws InvalidArgument unless dimension `dim` of `x` cuts into `n` pieces, one per device
// along the axes: a multiple of n (tiled) or exactly n (untiled, where the dimension goes away).
void check_splits(const char* op, const char* what, const Block& x, int dim, int64_t n,
                  bool tiled) {
  const int64_t extent = x.shape()[dim];
  if (tiled ? extent % n != 0 : extent != n) {
    throw InvalidArgument(
        fmt::format("{}: {} {} of {} has size {}, which must {} the {} devices along the axes", op,
                    what, dim, describe(x), extent, tiled ? "be divisible by" : "equal", n));
  }
}

// True when `axes` hold one device (axes of size 1, or none): the collective is the identity, up
// to a reshape, and a device block takes the path that moves nothing, where it lies.
bool on_one_device(const char* what, const AxisEntry& axes) {
  return resolve_axes(current_axis_context(what), axes, what).size == 1;
}

// The device group carrying the collective `what` of a device block over `axes` (device_route.h),
// or null where the collective stages through the host (a host block included).
DeviceGroup* routed(const char* what, const Block& x, const AxisEntry& axes) {
  if (x.memory() == MemorySpace::host()) return nullptr;
  const AxisContext& context = current_axis_context(what);
  const ResolvedAxes r = resolve_axes(context, axes, what);
  if (r.dims.empty()) return nullptr;
  DeviceGroup* group = device_route(axes_communicator(context, r.dims), x.memory());
  return group != nullptr && group->carries(x.dtype()) ? group : nullptr;
}

// psum, pmax and pmin of a device block on its group's device communicator.
Block device_reduce(const char* what, DeviceGroup& group, const Block& x, const AxisEntry& axes,
                    ReduceOp op) {
  Block out = Block::allocate(x.dtype(), x.shape(), x.memory());
  engine_call(what, axes, [&] {
    group.all_reduce(x.bytes().data(), out.mutable_bytes().data(), static_cast<size_t>(x.size()),
                     x.dtype(), op);
  });
  return out;
}

// A block in device memory meets the collectives engine, which moves host memory, through a
// host copy, and the result goes back to the block's memory: staging, for the collectives and
// groups that no device communicator carries (device_route.h).
template <class F>
Block staged(Block x, F&& collective) {
  if (x.memory() == MemorySpace::host()) return collective(std::move(x));
  const MemorySpace memory = x.memory();
  return collective(x.to_memory(MemorySpace::host())).to_memory(memory);
}

// all_gather of a device block on its group's device communicator, into `out`, where the
// gathered pieces need no rearranging (every dimension before `axis` has size 1); false, having
// done nothing, where it stages instead. The checks of the host path run there.
bool device_all_gather(const Block& x, const AxisEntry& axes, int axis, bool tiled, Block& out) {
  if (tiled && x.rank() == 0) return false;
  const int rank = x.rank() + (tiled ? 0 : 1);
  if (axis < -rank || axis >= rank) return false;
  const int dim = axis < 0 ? axis + rank : axis;
  if (product(x.shape(), 0, static_cast<size_t>(dim)) != 1) return false;
  DeviceGroup* group = routed("all_gather", x, axes);
  if (group == nullptr) return false;
  const int64_t n = group->size();
  Shape shape = x.shape();
  if (tiled) {
    shape[static_cast<size_t>(dim)] *= n;
  } else {
    shape.insert(shape.begin() + dim, n);
  }
  out = Block::allocate(x.dtype(), std::move(shape), x.memory());
  engine_call("all_gather", axes, [&] {
    group->all_gather(x.bytes().data(), out.mutable_bytes().data(), static_cast<size_t>(x.size()),
                      x.dtype());
  });
  return true;
}

// psum_scatter likewise: every dimension before the scattered one has size 1, so the pieces lie
// one after another as the communicator takes them.
bool device_psum_scatter(const Block& x, const AxisEntry& axes, int scatter_dimension, bool tiled,
                         Block& out) {
  if (scatter_dimension < -x.rank() || scatter_dimension >= x.rank()) return false;
  const int dim = scatter_dimension < 0 ? scatter_dimension + x.rank() : scatter_dimension;
  if (product(x.shape(), 0, static_cast<size_t>(dim)) != 1) return false;
  DeviceGroup* group = routed("psum_scatter", x, axes);
  if (group == nullptr) return false;
  const int64_t n = group->size();
  check_splits("psum_scatter", "dimension", x, dim, n, tiled);
  Shape shape = x.shape();
  if (tiled) {
    shape[static_cast<size_t>(dim)] /= n;
  } else {
    shape.erase(shape.begin() + dim);
  }
  out = Block::allocate(x.dtype(), std::move(shape), x.memory());
  engine_call("psum_scatter", axes, [&] {
    group->reduce_scatter(x.bytes().data(), out.mutable_bytes().data(),
                          static_cast<size_t>(out.size()), x.dtype(), ReduceOp::kSum);
  });
  return true;
}

}  // namespace

namespace {

// As JAX's psum: bool counts, in int32 (a sum in bool would be an "or").
Block summable(Block x) {
  if (x.dtype() == DType::kBool) return ops::converted(x, DType::kInt32);
  return x;  // moved out: an exclusively owned block stays so, for the in-place reduction
}

}  // namespace

Block psum(Block x, const AxisEntry& axes) {
  if (x.memory() == MemorySpace::host() || on_one_device("psum", axes)) {
    return reduce("psum", summable(std::move(x)), axes, ReduceOp::kSum);
  }
  Block summed = summable(std::move(x));
  if (DeviceGroup* group = routed("psum", summed, axes)) {
    return device_reduce("psum", *group, summed, axes, ReduceOp::kSum);
  }
  return staged(std::move(summed),
                [&](Block h) { return reduce("psum", std::move(h), axes, ReduceOp::kSum); });
}

Block psum_then(Block x, const AxisEntry& axes, const AllReduceEpilogue& then) {
  if (x.memory() == MemorySpace::host() && x.dtype() != DType::kBool) {
    const AxisContext& context = current_axis_context("psum");
    const ResolvedAxes r = resolve_axes(context, axes, "psum");
    if (r.size > 1) {
      Communicator c = axes_communicator(context, r.dims);
      // Into a block of its own: the executor's operand is still held by its slot.
      Block out = Block::uninitialized(x.dtype(), x.shape());
      const std::byte* in = x.bytes().data();
      engine_call("psum", axes, [&] {
        c.all_reduce_then(out.dtype(), in, out.mutable_bytes().data(),
                          static_cast<size_t>(out.size()), ReduceOp::kSum, then);
      });
      return out;
    }
  }
  const Block sum = psum(std::move(x), axes);
  Block out = Block::allocate(sum.dtype(), sum.shape(), sum.memory());
  then(sum.bytes().data(), out.mutable_bytes().data(), 0, static_cast<size_t>(sum.size()));
  return out;
}

Block pmax(Block x, const AxisEntry& axes) {
  if (x.memory() == MemorySpace::host() || on_one_device("pmax", axes)) {
    return reduce("pmax", std::move(x), axes, ReduceOp::kMax);
  }
  if (DeviceGroup* group = routed("pmax", x, axes)) {
    return device_reduce("pmax", *group, x, axes, ReduceOp::kMax);
  }
  return staged(std::move(x),
                [&](Block h) { return reduce("pmax", std::move(h), axes, ReduceOp::kMax); });
}

Block pmin(Block x, const AxisEntry& axes) {
  if (x.memory() == MemorySpace::host() || on_one_device("pmin", axes)) {
    return reduce("pmin", std::move(x), axes, ReduceOp::kMin);
  }
  if (DeviceGroup* group = routed("pmin", x, axes)) {
    return device_reduce("pmin", *group, x, axes, ReduceOp::kMin);
  }
  return staged(std::move(x),
                [&](Block h) { return reduce("pmin", std::move(h), axes, ReduceOp::kMin); });
}

namespace {

// `sum` divided by n in the floating `dtype`: integers convert to it first, the half types divide
// in float32 and round once, over the kernels.
Block divided(const Block& sum, int64_t n, DType dtype) {
  const Block x = ops::widened(is_floating(sum.dtype()) ? sum : ops::converted(sum, dtype));
  return ops::converted(ops::with_scalar(kernels::Binary::kDiv, x, static_cast<double>(n)), dtype);
}

}  // namespace

Block pmean(Block x, const AxisEntry& axes) {
  const int64_t n = resolve_axes(current_axis_context("pmean"), axes, "pmean").size;
  // Integers and bool (counted in int32): the sum in the integer dtype (psum), then true
  // division into float32 (JAX's default floating dtype), or float64 for 64-bit integers, whose
  // sums float32 would round beyond 2^24.
  const DType out = is_floating(x.dtype())       ? x.dtype()
                    : dtype_size(x.dtype()) == 8 ? DType::kFloat64
                                                 : DType::kFloat32;
  if (x.memory() != MemorySpace::host() && n > 1) {
    const Block summed = summable(x);
    if (DeviceGroup* group = routed("pmean", summed, axes)) {
      return divided(device_reduce("pmean", *group, summed, axes, ReduceOp::kSum), n, out);
    }
    return staged(std::move(x), [&](const Block& h) { return pmean(h, axes); });
  }
  return divided(reduce("pmean", summable(std::move(x)), axes, ReduceOp::kSum), n, out);
}

Block all_gather(const Block& x, const AxisEntry& axes, int axis, bool tiled) {
  if (x.memory() != MemorySpace::host() && !on_one_device("all_gather", axes)) {
    if (Block out; device_all_gather(x, axes, axis, tiled, out)) return out;
    return staged(x, [&](const Block& h) { return all_gather(h, axes, axis, tiled); });
  }
  const AxisContext& context = current_axis_context("all_gather");
  const ResolvedAxes r = resolve_axes(context, axes, "all_gather");
  const int dim = normalized("all_gather", "axis", axis, x, !tiled);
  if (tiled && x.rank() == 0) {
    throw InvalidArgument(
        "all_gather: a tiled gather needs a block of rank 1 or more, not a scalar");
  }
  const int64_t n = r.size;
  Shape out_shape = x.shape();
  if (tiled) {
    out_shape[dim] *= n;
  } else {
    out_shape.insert(out_shape.begin() + dim, n);
  }
  Shape stacked_shape = x.shape();
  stacked_shape.insert(stacked_shape.begin(), n);
  Block stacked =
      n == 1 ? x.reshape(stacked_shape) : Block::uninitialized(x.dtype(), stacked_shape);
  if (n > 1) {
    engine_call("all_gather", axes, [&] {
      axes_communicator(context, r.dims)
          .all_gather(x.dtype(), x.bytes().data(), stacked.mutable_bytes().data(),
                      static_cast<size_t>(x.size()));
    });
  }
  return join_at(stacked, x.shape(), dim, n, std::move(out_shape));
}

Block psum_scatter(const Block& x, const AxisEntry& axes, int scatter_dimension, bool tiled) {
  if (x.memory() != MemorySpace::host() && !on_one_device("psum_scatter", axes)) {
    if (Block out; device_psum_scatter(x, axes, scatter_dimension, tiled, out)) return out;
    return staged(x,
                  [&](const Block& h) { return psum_scatter(h, axes, scatter_dimension, tiled); });
  }
  const AxisContext& context = current_axis_context("psum_scatter");
  const ResolvedAxes r = resolve_axes(context, axes, "psum_scatter");
  const int dim = normalized("psum_scatter", "scatter_dimension", scatter_dimension, x, false);
  const int64_t n = r.size;
  const int64_t extent = x.shape()[dim];
  check_splits("psum_scatter", "dimension", x, dim, n, tiled);
  Shape out_shape = x.shape();
  if (tiled) {
    out_shape[dim] = extent / n;
  } else {
    out_shape.erase(out_shape.begin() + dim);
  }
  if (n == 1) return x.reshape(std::move(out_shape));
  const Block send = pieces_first(x, dim, n);
  Block out = Block::uninitialized(x.dtype(), std::move(out_shape));
  engine_call("psum_scatter", axes, [&] {
    axes_communicator(context, r.dims)
        .reduce_scatter(x.dtype(), send.bytes().data(), out.mutable_bytes().data(),
                        static_cast<size_t>(out.size()), ReduceOp::kSum);
  });
  return out;
}

Block all_to_all(const Block& x, const AxisEntry& axes, int split_axis, int concat_axis,
                 bool tiled) {
  if (x.memory() != MemorySpace::host() && !on_one_device("all_to_all", axes)) {
    return staged(
        x, [&](const Block& h) { return all_to_all(h, axes, split_axis, concat_axis, tiled); });
  }
  const AxisContext& context = current_axis_context("all_to_all");
  const ResolvedAxes r = resolve_axes(context, axes, "all_to_all");
  const int split = normalized("all_to_all", "split_axis", split_axis, x, false);
  const int64_t n = r.size;
  const int64_t extent = x.shape()[split];
  check_splits("all_to_all", "split_axis", x, split, n, tiled);
  // Each piece has x's shape with the split dimension cut n ways; without `tiled`, that
  // dimension (now 1) is dropped before the pieces are joined along a new one.
  Shape piece = x.shape();
  piece[split] = extent / n;
  if (!tiled) piece.erase(piece.begin() + split);
  const int rank_out = x.rank();
  if (concat_axis < -rank_out || concat_axis >= rank_out) {
    throw InvalidArgument(fmt::format("all_to_all: concat_axis {} is outside a result of rank {}",
                                      concat_axis, rank_out));
  }
  const int concat = concat_axis < 0 ? concat_axis + rank_out : concat_axis;
  Shape out_shape = piece;
  if (tiled) {
    out_shape[concat] *= n;
  } else {
    out_shape.insert(out_shape.begin() + concat, n);
  }
  const Block send = pieces_first(x, split, n);
  Block received = n == 1 ? send : Block::uninitialized(x.dtype(), x.shape());
  if (n > 1) {
    engine_call("all_to_all", axes, [&] {
      axes_communicator(context, r.dims)
          .all_to_all(x.dtype(), send.bytes().data(), received.mutable_bytes().data(),
                      static_cast<size_t>(x.size() / n));
    });
  }
  return join_at(received, piece, concat, n, std::move(out_shape));
}

Block ppermute(const Block& x, const AxisEntry& axes,
               const std::vector<std::pair<int, int>>& perm) {
  if (x.memory() != MemorySpace::host()) {
    return staged(x, [&](const Block& h) { return ppermute(h, axes, perm); });
  }
  const AxisContext& context = current_axis_context("ppermute");
  const ResolvedAxes r = resolve_axes(context, axes, "ppermute");
  for (const auto& [source, target] : perm) {
    if (source < 0 || source >= r.size || target < 0 || target >= r.size) {
      throw InvalidArgument(fmt::format(
          "ppermute: the pair ({}, {}) names an index outside the {} devices along the axes",
          source, target, r.size));
    }
  }
  if (r.dims.empty()) return perm.empty() ? Block::zeros(x.dtype(), x.shape()) : x;
  Block out = Block::uninitialized(x.dtype(), x.shape());
  engine_call("ppermute", axes, [&] {
    axes_communicator(context, r.dims)
        .permute(x.dtype(), x.bytes().data(), out.mutable_bytes().data(),
                 static_cast<size_t>(x.size()), perm);
  });
  return out;
}

int64_t axis_index(const AxisEntry& axes) {
  return resolve_axes(current_axis_context("axis_index"), axes, "axis_index").index;
}

int64_t axis_size(const AxisEntry& axes) {
  return resolve_axes(current_axis_context("axis_size"), axes, "axis_size").size;
}

}  // namespace spmd
