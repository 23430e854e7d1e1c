// Orbax's checkpoints, read by spmd: a directory that orbax.checkpoint (0.12 and its neighbours)
// wrote with StandardCheckpointer, PyTreeCheckpointHandler or a CheckpointManager's step.
//
// What is read:
//  - _METADATA's "tree_metadata": each leaf's key path, named here as spmd names leaves, its
//    keys joined by '/' ({"layers": [{"b": x}]} as "layers/0/b"); its arrays are stored under the
//    keys joined by '.' ("layers.0.b"), as Orbax names them;
//  - the arrays in an OCDBT database (Orbax's default: manifest.ocdbt at the root, one per writing
//    process beneath it, ocdbt_store.h) or one directory per leaf (use_ocdbt=False);
//  - Zarr v2 or v3 (use_zarr3=True) arrays (zarr_format.h);
//  - a CheckpointManager's step directory: its items (subdirectories holding _METADATA) are read
//    as one tree whose first component is the item's name ("state/w"), except a lone "default"
//    item, which is the tree itself.
// What is refused, with an error naming the directory: a directory Orbax had not finished (it
// writes <name>.orbax-checkpoint-tmp…, then commit_success.txt, then renames it to <name>); a
// _METADATA of Orbax before 0.5 (no "tree_metadata"); leaves that are not arrays (strings,
// Python objects). Restoring is not collective: each process reads the chunks its devices need.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "spmd/checkpoint.h"

namespace spmd::checkpoint {

// True when `dir` holds an Orbax checkpoint (an item's _METADATA, or a step's items) rather than
// an spmd one; says nothing of whether it is finished.
bool is_orbax_checkpoint(const std::string& dir);

// True when `dir` is an Orbax checkpoint Orbax finished writing.
bool is_finished_orbax_checkpoint(const std::string& dir);

class OrbaxCheckpoint {
 public:
  // Opens the checkpoint at `dir`: reads its metadata and indexes its OCDBT databases. Throws
  // FailedPrecondition when Orbax had not finished it, spmd::Error naming the file for anything
  // malformed.
  static OrbaxCheckpoint open(const std::string& dir);

  // Each array leaf's dtype and global shape, by spmd's name for it.
  const std::map<std::string, ArrayInfo>& arrays() const { return infos_; }
  // The numeric metrics Orbax recorded for the step (a best-tracking CheckpointManager's
  // "metrics" item, else _CHECKPOINT_METADATA's) and the string entries of its custom_metadata;
  // Orbax keeps no step number inside.
  const Metadata& metadata() const { return metadata_; }
  // Restores leaf `name` onto `sharding`. Throws InvalidArgument for a name the checkpoint lacks.
  Array restore(const std::string& name, const Sharding& sharding) const;

  struct Leaf;
  struct Item;

 private:
  std::string dir_;
  std::map<std::string, std::shared_ptr<const Leaf>> leaves_;
  std::map<std::string, ArrayInfo> infos_;
  Metadata metadata_;
};

}  // namespace spmd::checkpoint
