// spmd::checkpoint — saving sharded arrays from every process at once and restoring them onto
// any layout (seed 000's "distributed checkpointing"; Orbax's role in JAX).
//
// A checkpoint is a directory in the Zarr v2 format, readable by any Zarr reader:
//   .zgroup, spmd_checkpoint.json   the tree, dtypes, shapes, checksums and metadata
//   <name>/.zarray, .zattrs         one Zarr array per tree entry ...
//   <name>/0.0, <name>/1.0, …       ... and one chunk file per shard (chunk = shard)
//   COMMIT                          written last: the checkpoint is complete
// Names with '/' nest (Zarr groups). Chunks are compressed with zstd (default) or stored raw;
// every chunk's xxHash (XXH3-64 of the stored bytes) is in spmd_checkpoint.json and is checked
// when the chunk is read. bfloat16 arrays carry TensorStore's dtype name "bfloat16": TensorStore
// reads them; NumPy-based readers (zarr-python) do not know that dtype and must read the chunks
// as raw 2-byte values (uint16).
//
// Saving is collective over every process, in four steps:
//  1. Agree. Each process sends process 0 its proposal (path, step, each array's dtype, shape,
//     chunk shape and sharding, the chunks it writes) through the coordination service. Process 0
//     checks that they agree and cover every chunk exactly once; a process whose own checks
//     failed takes part and votes no. All go on, or all throw the same error naming the process
//     and the leaf, before anything is written.
//  2. Prepare (process 0). The path is normalized ('.', '..', links); it must be new or an empty
//     directory, or with SaveOptions::overwrite a committed checkpoint. Anything else, including
//     a path inside a checkpoint, is refused: a save never deletes what it did not write. Process
//     0 takes the path's save lock (`<dir>.spmd-lock`, naming its holder; a dead holder's is
//     taken over), reclaims what crashed saves of the path left (recognised by the `.spmd-save`
//     marker holding their save id, never by name), and makes `<dir>.tmp-<save id>`.
//  3. Write. Each process writes only the shards it holds with replica id 0 (no byte is written
//     twice), in parallel threads, and reports its checksums or its error.
//  4. Commit (process 0), when everyone succeeded: metadata, fsyncs, COMMIT written inside under
//     a temporary name, then one rename into place (an atomic exchange with the checkpoint
//     replaced). Any failure leaves no COMMIT and fails the save everywhere, naming the process
//     and what went wrong. Readers never open a directory without COMMIT. The lock is released.
// distributed::shutdown() waits for saves in flight before it leaves the cluster. The directory
// must be on a file system every process sees (one host, or a shared file system).
//
// Restoring is not collective: each process reads only the chunk regions its devices need under
// the target sharding — any mesh, any number of processes and devices. restore(),
// read_array_info() and is_committed() also read the checkpoints Orbax writes (an Orbax step or
// item directory: OCDBT or one directory per leaf, Zarr v2 or v3; a leaf's name is its keys joined
// by '/'; a checkpoint Orbax had not finished is a FailedPrecondition), and Format::kOrbax saves
// one that Orbax restores. README's "Coming from Orbax" says what is read and what is refused.
// Restore trusts nothing it reads: regular files only (never a FIFO or device), no symbolic link
// below the checkpoint, sizes checked for overflow and against the chunk grid, .zarray checked
// against the metadata, reads and allocations bounded by what the validated metadata and the target
// need, every failure an spmd::Error naming the file.
//
// Thread safety: the functions may be called from any thread; an AsyncCheckpointer serialises its
// own saves.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "spmd/array.h"
#include "spmd/sharding.h"
#include "spmd/tree.h"

namespace spmd::checkpoint {

// Arrays by name. A name is one or more components separated by '/'; a component is non-empty,
// is not "." or "..", does not start with '.', and holds no '\\' or NUL.
using Tree = std::map<std::string, Array>;

// The layout to restore each array onto, by name.
using ShardingTree = std::map<std::string, std::shared_ptr<const Sharding>>;

enum class Compression { kZstd, kNone };

// How a checkpoint lays its arrays out.
enum class Format {
  // spmd's: an array's name components are nested Zarr groups ("layer/w" in layer/w/).
  kSpmd,
  // Orbax's as well: a checkpoint that orbax.checkpoint restores in JAX
  // (StandardCheckpointer().restore(path, abstract_tree)), in its Zarr v2 form without OCDBT. Each
  // array is one directory named by its components joined by '.' ("layer.w"), as Orbax names its
  // leaves, beside Orbax's _METADATA, _sharding, _CHECKPOINT_METADATA and commit_success.txt.
  // Everything else is as kSpmd: spmd restores it, checksums checked, with the same call.
  kOrbax,
};

// What a checkpoint says about itself besides its arrays.
struct Metadata {
  std::optional<int64_t> step;
  std::map<std::string, double> metrics;
  std::map<std::string, std::string> user;
};

struct SaveOptions {
  Compression compression = Compression::kZstd;
  // zstd's level: 1 is the fastest, about as fast as the disk on dense float data; higher levels
  // trade time for space.
  int zstd_level = 1;
  // Threads each process writes its chunks with: several keep the disk busy while others
  // compress.
  int threads = 4;
  // How long a process waits for the others at each step of the commit protocol; a timeout names
  // the processes that did not arrive. Default: the job's collective timeout
  // (distributed::Options::collective_timeout, ten minutes unless set).
  std::optional<std::chrono::milliseconds> timeout;
  Metadata metadata;
  // Replace a committed checkpoint at the path (Orbax's force/overwrite): the new one is written
  // beside it and exchanged with it in one rename, and the old one is removed after. Without it,
  // a committed checkpoint is refused (AlreadyExists). Never replaces anything else.
  bool overwrite = false;
  // kOrbax also writes what Orbax reads (above). Names whose '.'-joined forms coincide ("a/b" and
  // "a.b") are then refused, as Orbax could not tell them apart.
  Format format = Format::kSpmd;
  // Format::kOrbax: the tree nodes, by name ("layers"), whose children are a list's elements
  // ("layers/0", "layers/1"), so that Orbax restores a list where the saved tree had one (its
  // restore refuses a tree whose lists and dicts differ from the checkpoint's). Python's
  // spmd.checkpoint.save fills it from the pytree; every other node is a dict.
  std::set<std::string> sequence_nodes;
};

// Saves `tree` to `dir` (see the file comment). Collective: every process calls it with the same
// path, names, dtypes, global shapes and shardings, in the same order. Throws, alike in every
// process: AlreadyExists when `dir` holds anything but nothing, an empty directory or (with
// overwrite) a committed checkpoint, or when another save of `dir` is in progress (naming it);
// InvalidArgument for a bad, reserved or non-UTF-8 name, metadata JSON cannot hold, a path inside
// a checkpoint, or processes whose proposals differ or leave chunks uncovered (naming the process
// and the leaf); FailedPrecondition after distributed::shutdown(); spmd::Error naming the process
// and file when a write fails; DeadlineExceeded naming the processes that did not arrive.
void save(const std::string& dir, const Tree& tree, const SaveOptions& options = {});

// True when `dir` holds a committed checkpoint: spmd's (COMMIT), or one Orbax finished.
bool is_committed(const std::string& dir);

// The metadata of the committed checkpoint at `dir` (for one Orbax wrote: the numeric metrics and
// string custom metadata of its _CHECKPOINT_METADATA, no step). Throws
// FailedPrecondition when `dir` is not a committed checkpoint, spmd::Error naming the file when
// its metadata is malformed.
Metadata read_metadata(const std::string& dir);

// The arrays' names, dtypes and global shapes, from the metadata.
struct ArrayInfo {
  DType dtype = DType::kFloat32;
  Shape shape;
};
std::map<std::string, ArrayInfo> read_array_info(const std::string& dir);

// Restores every array of `targets` (a subset of the checkpoint's names) onto its sharding.
// Throws FailedPrecondition for an uncommitted directory, InvalidArgument for a name the
// checkpoint lacks or a sharding that does not fit the array's rank, spmd::Error naming the file
// for a missing, truncated or corrupted chunk (its checksum differs) or malformed metadata.
Tree restore(const std::string& dir, const ShardingTree& targets);
// Restores every array of the checkpoint onto `sharding`.
Tree restore(const std::string& dir, const Sharding& sharding);

// A nested parameter tree (spmd::Tree, tree.h) saves as the arrays named by its paths
// ("layer/w", nested Zarr groups); restore it with tree_from_paths(restore(...)). A template only
// so that a braced list still means the flat Tree above.
template <class A>
requires std::same_as<A, Array>
void save(const std::string& dir, const spmd::Tree<A>& tree, const SaveOptions& options = {}) {
  save(dir, tree_to_paths(tree), options);
}

// Saves in the background. The save is collective from save_async() on: distributed::shutdown()
// (explicit, or at exit) waits for it before leaving the cluster, so one still in flight when
// main returns completes, or fails everywhere, and never commits a part. save_async() copies this
// process's shards to host buffers — at most one checkpoint's worth (this process's replica-0
// shards) is held, because a save waits for the previous one to finish before copying — and
// returns; the writing, the commit protocol and its collectives run on a background thread while
// the program computes. A background failure is thrown by the next save_async() or
// wait_until_finished(), never lost; the destructor waits for the save in flight and logs (cannot
// throw) a failure nobody collected.
class AsyncCheckpointer {
 public:
  AsyncCheckpointer() = default;
  ~AsyncCheckpointer();
  AsyncCheckpointer(const AsyncCheckpointer&) = delete;
  AsyncCheckpointer& operator=(const AsyncCheckpointer&) = delete;

  // Collective, like save(): every process calls it in the same order.
  void save_async(const std::string& dir, const Tree& tree, const SaveOptions& options = {});
  // Waits for the save in flight; throws its failure.
  void wait_until_finished();
  // True while a save is being written.
  bool in_progress() const;

 private:
  void join_and_collect();

  mutable std::mutex mu_;
  std::thread worker_;
  bool running_ = false;
  std::exception_ptr error_;
};

}  // namespace spmd::checkpoint
