// Where a save may write, and how spmd recognises its own unfinished work: the target path
// normalized, what it holds, and the marker file inside every directory a save creates. These are
// what keep a save from deleting anything it did not write.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace spmd::checkpoint {

// The file inside every directory a save writes (its temporary directory, and a checkpoint being
// replaced): the save's id and its target, so that a crashed save's leftovers are recognised by
// their contents, never by their name alone. Its name starts with '.', which no array name may.
inline constexpr const char* kSaveMarkerFile = ".spmd-save";

// What the target path of a save holds now.
enum class TargetState {
  kAbsent,          // nothing: the save creates it
  kEmptyDirectory,  // an empty directory: the save's directory replaces it
  kCommitted,       // a committed spmd checkpoint: replaced only with SaveOptions::overwrite
  kLeftover,        // an uncommitted directory carrying this target's save marker: reclaimable
};

struct SaveTarget {
  std::filesystem::path dir;     // absolute: '.', '..', trailing '/' and symbolic links resolved
  std::filesystem::path parent;  // dir's parent, where the temporary directory and lock go
  std::string base;              // dir's last component
  TargetState state = TargetState::kAbsent;
};

// `dir` normalized (relative to the working directory; see SaveTarget::dir), state not looked at.
// Throws InvalidArgument for an empty path or a file-system root.
SaveTarget normalized_target(const std::string& dir);

// Normalizes `dir` (relative to the working directory) and decides whether a save may write
// there. Throws InvalidArgument for an empty path, a file-system root, or a path inside a
// committed checkpoint or another save's directory; AlreadyExists naming the path and what it
// holds for anything but the states above, and for a committed checkpoint unless `overwrite`.
SaveTarget resolve_save_target(const std::string& dir, bool overwrite);

// The temporary directory of save `save_id` of `target`: `<parent>/<base>.tmp-<save_id>`.
std::filesystem::path temporary_dir(const SaveTarget& target, const std::string& save_id);

// Writes (replacing) the marker of save `save_id` of `target` into `dir`, durably. Throws
// spmd::Error naming the file.
void write_save_marker(const std::filesystem::path& dir, const std::string& save_id,
                       const SaveTarget& target);

// The save id in `dir`'s marker when the marker is a regular file (no link) naming `target` as
// its target; nullopt otherwise (no marker, another target's, unreadable).
std::optional<std::string> read_save_marker(const std::filesystem::path& dir,
                                            const std::filesystem::path& target);

// Removes what crashed saves of `target` left beside it: each `<base>.tmp-<id>` directory whose
// marker carries that id and names `target`, and the target itself when it is uncommitted and
// carries a marker naming it (a kLeftover). The caller holds the target's save lock. Returns how
// many it removed; a failure to remove is logged, never thrown (the new save does not need the
// room).
int reclaim_leftovers(const SaveTarget& target);

// A random save id: 16 hex digits.
std::string new_save_id();

}  // namespace spmd::checkpoint
