// Temporary directories, the rename into place, COMMIT, and cleaning up after crashed saves.
#include "checkpoint/commit.h"

#include <fmt/format.h>

#include <filesystem>
#include <random>
#include <span>

#include "checkpoint/chunk_io.h"
#include "checkpoint/names.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace fs = std::filesystem;

namespace {

std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

void write_text(const fs::path& path, const std::string& text) {
  write_file_durably(path.string(), std::span<const char>(text.data(), text.size()));
}

// The parent directory of `dir` ("." for a bare name).
fs::path parent_of(const fs::path& dir) {
  const fs::path p = dir.parent_path();
  return p.empty() ? fs::path(".") : p;
}

fs::path normalized(const std::string& dir) {
  if (dir.empty()) throw InvalidArgument("checkpoint: the directory is an empty path");
  fs::path p(dir);
  if (!p.has_filename()) p = p.parent_path();  // "ckpt/" -> "ckpt"
  return p;
}

}  // namespace

std::string array_dir(const std::string& root, const std::string& name) {
  fs::path p(root);
  for (const auto& c : name_components(name)) p /= c;
  return p.string();
}

std::string prepare_save(const std::string& dir_text) {
  const fs::path dir = normalized(dir_text);
  const fs::path parent = parent_of(dir);
  const std::string base = dir.filename().string();
  std::error_code ec;
  if (fs::exists(dir / kCommitFile, ec)) {
    throw AlreadyExists(fmt::format(
        "checkpoint: {} already holds a committed checkpoint; save elsewhere or delete it first",
        dir.string()));
  }
  if (fs::exists(dir, ec)) fs::remove_all(dir, ec);  // renamed into place, crashed before COMMIT
  if (ec) throw Error(fmt::format("checkpoint: cannot remove {}: {}", dir.string(), ec.message()));
  if (fs::is_directory(parent, ec)) {
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(base + ".tmp-", 0) == 0) fs::remove_all(entry.path(), ec);
    }
  }
  const fs::path tmp = parent / (base + ".tmp-" + random_suffix());
  fs::create_directories(tmp, ec);
  if (ec) {
    throw Error(fmt::format("checkpoint: cannot create {}: {}", tmp.string(), ec.message()));
  }
  return tmp.string();
}

void commit_save(const std::string& tmp_text, const std::string& dir_text,
                 const CheckpointRecord& record) {
  const fs::path tmp(tmp_text);
  const fs::path dir = normalized(dir_text);
  const std::string group = R"({"zarr_format": 2})";
  write_text(tmp / ".zgroup", group);
  for (const auto& [name, array] : record.arrays) {
    fs::path p = tmp;
    const auto parts = name_components(name);
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
  write_text(tmp / kMetadataFile, encode_record(record));
  // Every directory's entries (the other processes' chunk files included) made durable.
  std::vector<std::string> dirs = {tmp.string()};
  for (const auto& entry : fs::recursive_directory_iterator(tmp)) {
    if (entry.is_directory()) dirs.push_back(entry.path().string());
  }
  for (const auto& d : dirs) fsync_directory(d);
  std::error_code ec;
  fs::rename(tmp, dir, ec);
  if (ec) {
    throw Error(fmt::format("checkpoint: cannot rename {} to {}: {}", tmp.string(), dir.string(),
                            ec.message()));
  }
  fsync_directory(parent_of(dir).string());
  write_text(dir / kCommitFile, "committed\n");
  fsync_directory(dir.string());
}

void remove_checkpoint(const std::string& dir_text) {
  const fs::path dir = normalized(dir_text);
  const fs::path doomed =
      parent_of(dir) / (dir.filename().string() + ".deleting-" + random_suffix());
  std::error_code ec;
  fs::rename(dir, doomed, ec);
  if (ec) {
    throw Error(fmt::format("checkpoint: cannot remove {}: {}", dir.string(), ec.message()));
  }
  fs::remove_all(doomed, ec);
}

}  // namespace spmd::checkpoint
