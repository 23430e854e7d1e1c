// Errors thrown by spmd's public calls.
//
// Every public call reports failure by throwing spmd::Error or one of its subclasses. Messages
// say what was expected, what was found, and what to do about it. All classes are plain values:
// copyable and safe to catch from any thread.
#pragma once

#include <stdexcept>
#include <string>

namespace spmd {

// The base of every error spmd throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An argument or a value read from the environment was malformed or out of range.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// An operation's result has no sharding its operands' types decide: a jit value split over an
// Explicit mesh axis where JAX's rules for sharding in types find the result's split ambiguous or
// the operands' splits in conflict (jax's ShardingTypeError). Raised while tracing; the message
// names the operation, the operands' types and the remedy (out_sharding=, or spmd::reshard).
class ShardingTypeError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// An operand of a dtype the operation does not take, or an argument its dtype cannot hold: bool
// in arithmetic, an integer raised to a negative integer power (JAX's TypeError; in Python the
// class derives from TypeError as well as InvalidArgument).
class DTypeError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// An integer scalar (a Python int) beyond the integer type it enters arithmetic as: int32 with
// x64 off, int64 with it on or beside a 64-bit operand (JAX's OverflowError; in Python the class
// derives from OverflowError as well as InvalidArgument).
class OverflowError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// A wait ran out of time. The message names what did not arrive (processes, keys, the service).
class DeadlineExceeded : public Error {
 public:
  using Error::Error;
};

// Another process of the cluster (or the coordination service) died; the cluster cannot go on.
class PeerFailure : public Error {
 public:
  using Error::Error;
};

// Processes made different collective calls where they had to make the same one.
class CollectiveMismatch : public Error {
 public:
  using Error::Error;
};

// The call is not allowed in the current state, e.g. a second initialize().
class FailedPrecondition : public Error {
 public:
  using Error::Error;
};

// Something that must be unique already exists: a key set without overwrite, a process id that
// another process has already claimed.
class AlreadyExists : public Error {
 public:
  using Error::Error;
};

// The coordination service refused this process's credentials (a wrong auth token).
class PermissionDenied : public Error {
 public:
  using Error::Error;
};

// A resource ran out: device memory (a GPU's allocation failed), as JAX's RESOURCE_EXHAUSTED.
class ResourceExhausted : public Error {
 public:
  using Error::Error;
};

// A case the library does not implement, where JAX raises NotImplementedError (vmap of a pure
// callback without a vmap_method); in Python the class derives from NotImplementedError as well.
class Unimplemented : public Error {
 public:
  using Error::Error;
};

}  // namespace spmd
