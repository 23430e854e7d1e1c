// spmd's errors in Python: spmd.errors.Error derives from RuntimeError (JAX raises RuntimeError
// for a second initialize()), InvalidArgument also from ValueError, DTypeError also from
// TypeError, OverflowError also from Python's OverflowError and Unimplemented also from
// NotImplementedError (JAX's classes for the same
// mistakes), and each other class from Error, so that `except RuntimeError` catches them all and
// the C++ message is kept.
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "spmd/error.h"

namespace spmd::python {

void bind_errors(nb::module_& m) {
  nb::module_ errors = m.def_submodule("errors", "spmd's exception classes");
  static nb::exception<Error> error(errors, "Error", PyExc_RuntimeError);
  static nb::exception<InvalidArgument> invalid(
      errors, "InvalidArgument", nb::make_tuple(error, nb::handle(PyExc_ValueError)).ptr());
  static nb::exception<ShardingTypeError> sharding_type(errors, "ShardingTypeError", invalid.ptr());
  static nb::exception<DTypeError> dtype_error(
      errors, "DTypeError", nb::make_tuple(invalid, nb::handle(PyExc_TypeError)).ptr());
  static nb::exception<OverflowError> overflow(
      errors, "OverflowError", nb::make_tuple(invalid, nb::handle(PyExc_OverflowError)).ptr());
  static nb::exception<DeadlineExceeded> deadline(errors, "DeadlineExceeded", error.ptr());
  static nb::exception<PeerFailure> peer(errors, "PeerFailure", error.ptr());
  static nb::exception<CollectiveMismatch> mismatch(errors, "CollectiveMismatch", error.ptr());
  static nb::exception<FailedPrecondition> precondition(errors, "FailedPrecondition", error.ptr());
  static nb::exception<AlreadyExists> exists(errors, "AlreadyExists", error.ptr());
  static nb::exception<PermissionDenied> denied(errors, "PermissionDenied", error.ptr());
  static nb::exception<ResourceExhausted> exhausted(errors, "ResourceExhausted", error.ptr());
  static nb::exception<Unimplemented> unimplemented(
      errors, "Unimplemented", nb::make_tuple(error, nb::handle(PyExc_NotImplementedError)).ptr());
}

}  // namespace spmd::python
