// The file-system half of the commit protocol: where a save writes, how it becomes visible, and
// what a crashed save leaves behind. Process 0 runs these, holding the target's SaveLock; the
// protocol's messages are in save.cc.
#pragma once

#include <string>

#include "checkpoint/metadata.h"
#include "checkpoint/save_target.h"

namespace spmd::checkpoint {

// Makes the temporary directory of save `save_id` of `target` with the save marker inside, after
// reclaiming what crashed saves of the target left (save_target.h). Returns its path. Throws
// spmd::Error naming the path when the file system refuses.
std::string prepare_save(const SaveTarget& target, const std::string& save_id);

// Writes the Zarr group and array metadata and spmd_checkpoint.json (and, for Format::kOrbax,
// Orbax's metadata files: orbax_metadata.h) into `tmp`, fsyncs every
// directory under it, writes COMMIT inside it (under a temporary name, fsynced, renamed), and
// moves it to target.dir in one rename: exchanged atomically with the committed checkpoint it
// replaces (kCommitted; that one is removed after), else onto the absent path or empty
// directory. The parent is fsynced. On any error target.dir holds what it held before (a
// replaced checkpoint is put back), and the message says so. Throws spmd::Error naming the path.
void commit_save(const std::string& tmp, const SaveTarget& target, const std::string& save_id,
                 const CheckpointRecord& record);

// The directory of array `name` under `root` in `format` (names.h's array_path).
std::string array_dir(const std::string& root, const std::string& name, Format format);

// Removes a committed checkpoint so that no reader sees it half-deleted: it is marked as a
// leftover of a save and renamed beside itself (losing its place) before its files go, so a crash
// meanwhile leaves something the next save reclaims. Used by CheckpointManager.
void remove_checkpoint(const std::string& dir);

}  // namespace spmd::checkpoint
