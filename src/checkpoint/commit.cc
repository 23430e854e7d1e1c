// Temporary directories, the rename into place, COMMIT, and replacing a checkpoint.
#include "checkpoint/commit.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>

#include "checkpoint/chunk_io.h"
#include "checkpoint/names.h"
#include "checkpoint/orbax_metadata.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  write_file_durably(path.string(), std::span<const char>(text.data(), text.size()));
}

// COMMIT, written so that it exists whole or not at all: a temporary name, fsynced, renamed.
void write_commit_file(const fs::path& dir) {
  const fs::path partial = dir / (std::string(kCommitFile) + ".partial");
  write_text(partial, "committed\n");
  std::error_code ec;
  fs::rename(partial, dir / kCommitFile, ec);
  if (ec) {
    throw Error(fmt::format("checkpoint: cannot rename {} to {}: {}", partial.string(), kCommitFile,
                            ec.message()));
  }
  fsync_directory(dir.string());
}

void write_zarr_metadata(const fs::path& tmp, const CheckpointRecord& record,
                         const fs::path& final_path) {
  const std::string group = R"({"zarr_format": 2})";
  write_text(tmp / ".zgroup", group);
  for (const auto& [name, array] : record.arrays) {
    fs::path p = tmp;
    const auto parts = array_path(name, record.format);
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      p /= parts[i];
      fs::create_directories(p);
      write_text(p / ".zgroup", group);
    }
    p /= parts.back();
    fs::create_directories(p);
    write_text(p / ".zarray", zarray_json(array));
    write_text(p / ".zattrs", zattrs_json(array));
  }
  if (record.format == Format::kOrbax) {
    write_text(tmp / kOrbaxTreeMetadataFile, orbax_tree_metadata(record));
    write_text(tmp / kOrbaxShardingFile, orbax_sharding_file(record));
    write_text(tmp / kOrbaxStepMetadataFile, orbax_step_metadata(record));
    write_text(tmp / kOrbaxCommitFile, orbax_commit_text(final_path.string()));
  }
  write_text(tmp / kMetadataFile, encode_record(record));
}

// Every directory's entries (the other processes' chunk files included) made durable.
void fsync_tree(const fs::path& root) {
  std::vector<std::string> dirs = {root.string()};
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_directory() && !entry.is_symlink()) dirs.push_back(entry.path().string());
  }
  for (const auto& d : dirs) fsync_directory(d);
}

[[noreturn]] void rename_failed(const fs::path& from, const fs::path& to, int err) {
  throw Error(fmt::format("checkpoint: cannot rename {} to {}: {}; nothing was committed",
                          from.string(), to.string(), std::strerror(err)));
}

// Makes the rename that put the new checkpoint at target.dir durable (the parent fsynced). When
// that fails, `undo` puts back what the target held before (true when it could), so that the error
// is the whole truth: taken back and nothing committed, or committed but perhaps not durable.
void make_durable_or_undo(const SaveTarget& target, const std::function<bool()>& undo) {
  try {
    fsync_directory(target.parent.string());
  } catch (const Error& e) {
    if (undo()) {
      throw Error(
          fmt::format("{}; the checkpoint was taken back, nothing was committed", e.what()));
    }
    throw Error(fmt::format("{}; {} is committed but may not survive a crash of this host",
                            e.what(), target.dir.string()));
  }
}

bool exchange(const fs::path& a, const fs::path& b) {
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

// Puts the committed `tmp` at the target, which holds a committed checkpoint: exchanged in one
// renameat2(RENAME_EXCHANGE), or, where the file system cannot exchange (NFS), the old one moved
// aside first. After an exchange the replaced checkpoint sits at a leftover's name carrying this
// save's marker (a crash leaves it to the next save to reclaim); either way it is removed once the
// new one is durable.
void replace_committed(const fs::path& tmp, const SaveTarget& target, const std::string& save_id) {
  write_save_marker(target.dir, save_id, target);
  if (exchange(tmp, target.dir)) {
    make_durable_or_undo(target, [&] { return exchange(tmp, target.dir); });
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
    rename_failed(tmp, target.dir, errno);
  }
  // Moved aside under a name its marker (this save's id) does not match, so that a crash before
  // the new one is in place leaves it for the user to move back: no later save reclaims it.
  const fs::path old = temporary_dir(target, save_id + "-old");
  if (::rename(target.dir.c_str(), old.c_str()) != 0) rename_failed(target.dir, old, errno);
  if (::rename(tmp.c_str(), target.dir.c_str()) != 0) {
    const int err = errno;
    ::rename(old.c_str(), target.dir.c_str());
    rename_failed(tmp, target.dir, err);
  }
  make_durable_or_undo(target, [&] {
    return ::rename(target.dir.c_str(), tmp.c_str()) == 0 &&
           ::rename(old.c_str(), target.dir.c_str()) == 0;
  });
  std::error_code ec;
  fs::remove_all(old, ec);
}

}  // namespace

std::string array_dir(const std::string& root, const std::string& name, Format format) {
  fs::path p(root);
  for (const auto& c : array_path(name, format)) p /= c;
  return p.string();
}

std::string prepare_save(const SaveTarget& target, const std::string& save_id) {
  reclaim_leftovers(target);
  std::error_code ec;
  const fs::path tmp = temporary_dir(target, save_id);
  if (!fs::create_directory(tmp, ec) || ec) {
    throw Error(fmt::format("checkpoint: cannot create {}: {}", tmp.string(),
                            ec ? ec.message() : "it already exists"));
  }
  write_save_marker(tmp, save_id, target);
  return tmp.string();
}

void commit_save(const std::string& tmp_text, const SaveTarget& target, const std::string& save_id,
                 const CheckpointRecord& record) {
  const fs::path tmp(tmp_text);
  write_zarr_metadata(tmp, record, target.dir);
  fsync_tree(tmp);
  write_commit_file(tmp);
  if (target.state == TargetState::kCommitted) {
    replace_committed(tmp, target, save_id);
    return;
  }
  // Onto an absent path, or an empty directory (rename(2) replaces one; a directory that is no
  // longer empty makes it fail, and nothing is lost).
  if (::rename(tmp.c_str(), target.dir.c_str()) != 0) rename_failed(tmp, target.dir, errno);
  make_durable_or_undo(target, [&] { return ::rename(target.dir.c_str(), tmp.c_str()) == 0; });
}

void remove_checkpoint(const std::string& dir_text) {
  SaveTarget target = normalized_target(dir_text);
  const std::string id = new_save_id();
  write_save_marker(target.dir, id, target);
  const fs::path doomed = temporary_dir(target, id);
  std::error_code ec;
  fs::rename(target.dir, doomed, ec);
  if (ec) {
    throw Error(fmt::format("checkpoint: cannot remove {}: {}", target.dir.string(), ec.message()));
  }
  fs::remove_all(doomed, ec);
  if (ec) {
    spdlog::warn("checkpoint: {} was retired but cannot be removed: {} (the next save reclaims it)",
                 doomed.string(), ec.message());
  }
}

}  // namespace spmd::checkpoint
