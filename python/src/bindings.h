// The _spmd extension module (nanobind) behind the `spmd` Python package: one bind_* function
// per part of the C++ API, each a thin layer over it (python/spmd/ holds the Python side).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include "spmd/dtype.h"
#include "spmd/host_array.h"
#include "spmd/partition_spec.h"
#include "spmd/shape.h"

namespace spmd::python {

namespace nb = nanobind;

// spmd's error classes as Python exceptions (spmd.errors), and the translation of C++ throws.
void bind_errors(nb::module_& m);
// distributed.initialize/shutdown, Device and the device queries.
void bind_runtime(nb::module_& m);
// PartitionSpec, AxisType, Mesh, NamedSharding, make_mesh, set_mesh.
void bind_sharding(nb::module_& m);
// Array: from and to NumPy arrays, device_put, reshard.
void bind_array(nb::module_& m);
// Tensor (a traced value), spmd::numpy over Tensors, shard_map's and the collectives' traced
// forms, and vjp; then bind_jit.
void bind_trace(nb::module_& m);
// Host callbacks in traced programs (spmd/host_callback.h): _spmd.debug_callback,
// _spmd.pure_callback, _spmd.tracing (python/spmd/_callbacks.py).
void bind_callbacks(nb::module_& m);
// jit's core (_Jit, the base of spmd.jit's functions) with its call's fast path.
void bind_jit(nb::module_& m);
// spmd::random on raw keys, Arrays and Tensors.
void bind_random(nb::module_& m);
// spmd::optim's transformations over dicts (spmd.optax).
void bind_optim(nb::module_& m);
// spmd::checkpoint's save, restore and CheckpointManager over {name: Array} (spmd.checkpoint).
void bind_checkpoint(nb::module_& m);
// Ctrl-C: the watcher of Python's signal wakeup fd that interrupts blocking calls.
void bind_interrupt(nb::module_& m);
// spmd::data's sources and DistributedDataLoader (spmd.data).
void bind_data(nb::module_& m);

// NumPy's name of a dtype ("float32", "bfloat16", …) and back; InvalidArgument for an unknown
// name.
std::string numpy_name(DType dtype);
DType dtype_named(const std::string& name);

// Host data as it crosses from Python: a NumPy array's bytes (python/spmd/_core.py's _bytes).
using HostBytes = nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>, nb::c_contig>;

// A HostArray of `shape` and `dtype` (NumPy's name) holding `bytes`, copied once. Throws
// InvalidArgument when the byte count does not match.
HostArray host_of(const HostBytes& bytes, const Shape& shape, const std::string& dtype);
// The same without the copy (HostArray::borrow): the HostArray views the NumPy array's memory and
// keeps it alive. For data the caller lends, as JAX's device_put does by default on CPU: it must
// not change while any spmd array made from it lives.
HostArray host_view(const HostBytes& bytes, const Shape& shape, const std::string& dtype);

// The host array's bytes as a NumPy uint8 array that owns them (moved in, not copied).
nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> owned_bytes(HostArray host);

// One entry of a PartitionSpec or a collective's axis_name, as Python spells it: None (no axis;
// only where `none_ok`), a mesh axis name, or a tuple of names. Anything else is a TypeError
// that names `what` (the public function) and the value.
AxisEntry axis_entry(const nb::handle& h, const char* what, bool none_ok);

// A shape as Python's tuple of ints, as JAX gives shapes.
nb::tuple shape_tuple(const Shape& shape);

// An Index into an array of `shape` as Python's tuple of slices, as jax's devices_indices_map
// and Shard.index give it: slice(None) for a dimension held whole.
nb::tuple index_tuple(const Index& index, const Shape& shape);

}  // namespace spmd::python
