// The file-system half of the commit protocol: where a save writes, how it becomes visible, and
// what a crashed save leaves behind. Process 0 runs these; the protocol's messages are in save.cc.
#pragma once

#include <string>

#include "checkpoint/metadata.h"

namespace spmd::checkpoint {

// Makes `<dir>.tmp-<random>` and returns it, after removing what crashed saves of `dir` left:
// sibling `<dir>.tmp-*` directories, and `dir` itself when it has no COMMIT. Throws AlreadyExists
// when `dir` is a committed checkpoint, spmd::Error naming the path when the file system refuses.
std::string prepare_save(const std::string& dir);

// Writes the Zarr group and array metadata and spmd_checkpoint.json into `tmp`, fsyncs every
// directory under it, renames it to `dir`, and writes COMMIT last (all fsynced). After this
// returns, the checkpoint survives a crash; before COMMIT exists, no reader opens it.
void commit_save(const std::string& tmp, const std::string& dir, const CheckpointRecord& record);

// The directory of array `name` under `root` (its components as nested directories).
std::string array_dir(const std::string& root, const std::string& name);

// Removes a committed checkpoint so that no reader sees it half-deleted: it is renamed (losing
// its place) before its files go. Used by CheckpointManager.
void remove_checkpoint(const std::string& dir);

}  // namespace spmd::checkpoint
