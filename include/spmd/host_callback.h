// Host callbacks in a traced program: functions of the calling process that a compiled program
// calls while it runs, with its values copied to the host (jax.debug.callback, jax.debug.print
// and jax.pure_callback are built on these).
//
//   spmd::jit([](spmd::Tensor x) {
//     spmd::lax::debug_callback("show", {x}, [](std::vector<spmd::HostArray> v) {
//       fmt::print("x = {}\n", v[0].to_string());
//       return std::vector<spmd::HostArray>{};
//     });
//     return x * 2.0;
//   });
//
// Where a callback runs is JAX's rule: in a jit function the values are whole, and a debug
// callback runs once per call, on the mesh's first device (so in the process holding it); inside
// a shard_map function (or with `partitioned`) each device calls it with its own block. A pure
// callback runs wherever its result is needed, with whole values outside shard_map.
//
// The function runs on a device's thread while the program does: it must not wait for the call
// that runs it. An exception it throws fails that call with an Error naming the callback, the
// device and the process.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "spmd/eval_shape.h"
#include "spmd/host_array.h"
#include "spmd/tensor.h"

namespace spmd::lax {

// A host function: the values of a callback's operands, in order, to its results (none for a
// debug callback).
using HostFunction = std::function<std::vector<HostArray>(std::vector<HostArray>)>;

// How vmap maps a pure callback (jax.pure_callback's vmap_method).
enum class VmapMethod {
  kNone,          // refused under vmap (NotImplementedError in JAX's terms)
  kSequential,    // one call per slice, the results stacked
  kExpandDims,    // one call; unbatched operands get a leading axis of size 1
  kBroadcastAll,  // one call; every operand broadcast to the batch size
};

// True while spmd::jit traces a function on this thread: a callback made now belongs to that
// trace, even with no Tensor operands.
bool tracing();

// jax.debug.callback: `fn` called with the values of `args` each time the program runs (see
// above where), though no output depends on it. Under vmap, once per slice in order (JAX's
// unrolling); grad differentiates past it. `name` names it in the program's text. With no
// `args`, it belongs to the trace in progress on this thread (InvalidArgument when none).
void debug_callback(const std::string& name, const std::vector<Tensor>& args, HostFunction fn,
                    bool partitioned = false);

// jax.pure_callback: values of the types `results` (their shardings unused) computed on the host
// by `fn` from the values of `args`, a function without side effects: it may run on every device
// or not at all when nothing uses its results. fn must return one HostArray per result, of its
// shape and dtype, else the call fails with InvalidArgument saying which. No derivative (JAX's
// ValueError: use custom_jvp or custom_vjp).
std::vector<Tensor> pure_callback(const std::string& name, const std::vector<Tensor>& args,
                                  const std::vector<ShapeDtypeStruct>& results, HostFunction fn,
                                  VmapMethod vmap_method = VmapMethod::kNone);

}  // namespace spmd::lax
