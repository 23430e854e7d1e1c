// Resolving a save's target, what it holds, and the save marker.
#include "checkpoint/save_target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <vector>

#include "checkpoint/chunk_io.h"
#include "checkpoint/json_text.h"
#include "checkpoint/metadata.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A marker is a few hundred bytes; anything larger is not one.
constexpr uint64_t kMaxMarkerBytes = 64 << 10;
// How many entries an AlreadyExists message lists.
constexpr size_t kShownEntries = 3;

bool regular_file(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

bool is_committed_checkpoint(const fs::path& dir) {
  return regular_file(dir / kCommitFile) && regular_file(dir / kMetadataFile);
}

// The normalized absolute form of `text`: weakly_canonical resolves '.', '..' and symbolic links
// of the part that exists, and keeps the rest lexically.
fs::path normalize(const std::string& text) {
  if (text.empty()) throw InvalidArgument("checkpoint: the directory is an empty path");
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(fs::path(text), ec), ec);
  if (ec) {
    throw Error(fmt::format("checkpoint: cannot resolve the path {}: {}", text, ec.message()));
  }
  p = p.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "ckpt/" -> "ckpt"
  if (p == p.root_path() || !p.has_filename() || p.filename() == "..") {
    throw InvalidArgument(
        fmt::format("checkpoint: {} resolves to {}, a file-system root; save into a directory of "
                    "its own",
                    text, p.string()));
  }
  return p;
}

// Refuses a target inside a committed checkpoint or inside a directory a save is writing.
void refuse_nested(const fs::path& dir) {
  for (fs::path a = dir.parent_path(); !a.empty(); a = a.parent_path()) {
    if (is_committed_checkpoint(a)) {
      throw InvalidArgument(fmt::format(
          "checkpoint: {} lies inside the committed checkpoint {}; save beside it instead",
          dir.string(), a.string()));
    }
    if (regular_file(a / kSaveMarkerFile)) {
      throw InvalidArgument(fmt::format(
          "checkpoint: {} lies inside {}, a directory a checkpoint save writes; save elsewhere",
          dir.string(), a.string()));
    }
    if (a == a.root_path()) break;
  }
}

// "a directory holding 3 entries (a, b, notes.txt)".
std::string describe_directory(const fs::path& dir) {
  std::vector<std::string> names;
  size_t count = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (names.size() < kShownEntries) names.push_back(e.path().filename().string());
    ++count;
  }
  std::sort(names.begin(), names.end());
  return fmt::format("a directory holding {} entr{} ({}{})", count, count == 1 ? "y" : "ies",
                     fmt::join(names, ", "), count > names.size() ? ", …" : "");
}

std::string describe(const fs::file_status& st, const fs::path& p) {
  switch (st.type()) {
    case fs::file_type::regular:
      return "a file";
    case fs::file_type::symlink: {
      std::error_code ec;
      return fmt::format("a symbolic link to {}, which does not exist",
                         fs::read_symlink(p, ec).string());
    }
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    default:
      return "something other than a directory";
  }
}

}  // namespace

SaveTarget normalized_target(const std::string& text) {
  SaveTarget t;
  t.dir = normalize(text);
  t.parent = t.dir.parent_path();
  t.base = t.dir.filename().string();
  return t;
}

SaveTarget resolve_save_target(const std::string& text, bool overwrite) {
  SaveTarget t = normalized_target(text);
  refuse_nested(t.dir);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(t.dir, ec);
  if (st.type() == fs::file_type::not_found) return t;
  if (st.type() != fs::file_type::directory) {
    throw AlreadyExists(
        fmt::format("checkpoint: {} is {}; a save writes only to a new path or an empty directory",
                    t.dir.string(), describe(st, t.dir)));
  }
  if (fs::is_empty(t.dir, ec) && !ec) {
    t.state = TargetState::kEmptyDirectory;
    return t;
  }
  if (is_committed_checkpoint(t.dir)) {
    if (!overwrite) {
      throw AlreadyExists(fmt::format(
          "checkpoint: {} already holds a committed checkpoint; save elsewhere, or pass "
          "overwrite to replace it",
          t.dir.string()));
    }
    t.state = TargetState::kCommitted;
    return t;
  }
  if (read_save_marker(t.dir, t.dir)) {
    t.state = TargetState::kLeftover;
    return t;
  }
  throw AlreadyExists(
      fmt::format("checkpoint: {} is {} that no spmd save wrote (no COMMIT, no save marker); a "
                  "save writes only to a new path or an empty directory, so save elsewhere or "
                  "empty it yourself",
                  t.dir.string(), describe_directory(t.dir)));
}

fs::path temporary_dir(const SaveTarget& target, const std::string& save_id) {
  return target.parent / (target.base + ".tmp-" + save_id);
}

void write_save_marker(const fs::path& dir, const std::string& save_id, const SaveTarget& target) {
  json record = saver_record(save_id);
  record["target"] = target.dir.string();
  const std::string text = json_text(record);
  const fs::path file = dir / kSaveMarkerFile;
  std::error_code ec;
  fs::remove(file, ec);  // a link or an older marker: never written through
  write_file_durably(file.string(), std::span<const char>(text.data(), text.size()));
}

std::optional<std::string> read_save_marker(const fs::path& dir, const fs::path& target) {
  try {
    const Buffer text = read_file((dir / kSaveMarkerFile).string(), kMaxMarkerBytes);
    const json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_object() || !j.contains("spmd_save") || !j["spmd_save"].is_string() ||
        !j.contains("target") || j["target"] != target.string()) {
      return std::nullopt;
    }
    return j["spmd_save"].get<std::string>();
  } catch (const Error&) {
    return std::nullopt;
  }
}

int reclaim_leftovers(const SaveTarget& target) {
  int removed = 0;
  auto reclaim = [&](const fs::path& p) {
    std::error_code ec;
    fs::remove_all(p, ec);
    if (ec) {
      spdlog::warn("checkpoint: cannot remove {}, left by a crashed save: {}", p.string(),
                   ec.message());
      return;
    }
    spdlog::info("checkpoint: removed {}, left by a crashed save of {}", p.string(),
                 target.dir.string());
    ++removed;
  };
  if (!is_committed_checkpoint(target.dir) && read_save_marker(target.dir, target.dir)) {
    reclaim(target.dir);
  }
  const std::string prefix = target.base + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target.parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const auto id = read_save_marker(entry.path(), target.dir);
    if (id && *id == name.substr(prefix.size())) reclaim(entry.path());
  }
  return removed;
}

std::string new_save_id() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

}  // namespace spmd::checkpoint
