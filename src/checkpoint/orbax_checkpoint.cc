#include "checkpoint/orbax_checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "checkpoint/chunk_io.h"
#include "checkpoint/chunked_restore.h"
#include "checkpoint/metadata.h"
#include "checkpoint/ocdbt_store.h"
#include "checkpoint/zarr_format.h"
#include "spmd/error.h"

namespace spmd::checkpoint {

namespace fs = std::filesystem;
using json = nlohmann::json;

// One item of a checkpoint: a directory with _METADATA, its arrays in an OCDBT database or in
// one directory per leaf.
struct OrbaxCheckpoint::Item {
  std::string dir;
  std::optional<OcdbtStore> ocdbt;

  // The value of `key` (at most `max_bytes`), nullopt when absent.
  std::optional<Buffer> read(const std::string& key, uint64_t max_bytes) const {
    if (ocdbt) return ocdbt->read(key, max_bytes);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(fs::path(dir) / key, ec))) return std::nullopt;
    const RegularFile file = open_relative(dir, key);
    return read_file(file, max_bytes);
  }
};

struct OrbaxCheckpoint::Leaf {
  std::shared_ptr<const Item> item;
  std::string param;  // the array's key prefix: the leaf's keys joined by '.'
  ZarrArray zarr;
};

namespace {

constexpr const char* kTmpSuffix = ".orbax-checkpoint-tmp";
constexpr const char* kCommitSuccess = "commit_success.txt";
constexpr const char* kTreeMetadata = "_METADATA";
constexpr const char* kStepMetadata = "_CHECKPOINT_METADATA";
// Orbax's _METADATA holds a few hundred bytes per leaf.
constexpr uint64_t kMaxOrbaxMetadataBytes = uint64_t{256} << 20;

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

json read_json(const std::string& dir, const std::string& name) {
  const RegularFile file = open_relative(dir, name);
  const Buffer text = read_file(file, kMaxOrbaxMetadataBytes);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw Error(fmt::format("checkpoint: {} is not JSON: {}", file.path(), e.what()));
  }
}

// The subdirectories of a step that hold an item, sorted.
std::vector<std::string> item_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) && !e.is_symlink(ec) && present(e.path() / kTreeMetadata)) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Whether Orbax recorded a commit in `dir`: commit_success.txt, or (older Orbax, which renamed
// without it) a commit time in _CHECKPOINT_METADATA.
bool has_commit_record(const std::string& dir) {
  if (present(fs::path(dir) / kCommitSuccess)) return true;
  if (!present(fs::path(dir) / kStepMetadata)) return false;
  try {
    const json j = read_json(dir, kStepMetadata);
    return j.is_object() && j.contains("commit_timestamp_nsecs") &&
           j["commit_timestamp_nsecs"].is_number();
  } catch (const Error&) {
    return false;
  }
}

bool tmp_named(const std::string& dir) {
  return fs::path(dir).lexically_normal().filename().string().find(kTmpSuffix) !=
             std::string::npos ||
         fs::path(dir).lexically_normal().parent_path().filename().string().find(kTmpSuffix) !=
             std::string::npos;
}

void check_finished(const std::string& dir) {
  if (tmp_named(dir)) {
    throw FailedPrecondition(fmt::format(
        "checkpoint: {} is a checkpoint Orbax had not finished writing (Orbax writes into a "
        "\"{}\" directory and renames it when the save commits); restore a finished step",
        dir, kTmpSuffix));
  }
  if (!has_commit_record(dir)) {
    throw FailedPrecondition(fmt::format(
        "checkpoint: {} holds no {} and no commit time in {}: Orbax did not finish writing it", dir,
        kCommitSuccess, kStepMetadata));
  }
}

// The JSON object `name` beneath `dir`; null when absent or not JSON (it then adds nothing).
json optional_json(const std::string& dir, const std::string& name) {
  if (!present(fs::path(dir) / name)) return nullptr;
  try {
    return read_json(dir, name);
  } catch (const Error&) {
    return nullptr;
  }
}

// What Orbax records of a step that spmd's Metadata holds: the numeric metrics (of the "metrics"
// item a CheckpointManager tracking the best writes, else of _CHECKPOINT_METADATA) and the string
// entries of _CHECKPOINT_METADATA's custom_metadata.
Metadata step_metadata(const std::string& dir) {
  Metadata m;
  const json step = optional_json(dir, kStepMetadata);
  json metrics = optional_json(dir, "metrics/metrics");
  if (!metrics.is_object() && step.is_object()) metrics = step.value("metrics", json());
  if (metrics.is_object()) {
    for (const auto& [k, v] : metrics.items()) {
      if (v.is_number()) m.metrics[k] = v.get<double>();
    }
  }
  const json custom = step.is_object() ? step.value("custom_metadata", json()) : json();
  if (custom.is_object()) {
    for (const auto& [k, v] : custom.items()) {
      if (v.is_string()) m.user[k] = v.get<std::string>();
    }
  }
  return m;
}

// The leaf's keys from its "key_metadata".
std::vector<std::string> leaf_keys(const json& entry, const std::string& file) {
  std::vector<std::string> keys;
  const json& meta = entry.is_object() ? entry.value("key_metadata", json()) : json();
  if (!meta.is_array() || meta.empty()) {
    throw Error(fmt::format("checkpoint: {} has a leaf without key_metadata", file));
  }
  for (const json& k : meta) {
    if (!k.is_object() || !k.contains("key") || !k["key"].is_string()) {
      throw Error(fmt::format("checkpoint: {} has a key that is not a string: {}", file, k.dump()));
    }
    keys.push_back(k["key"].get<std::string>());
  }
  return keys;
}

// The Zarr metadata of the array under `param`: v2 or v3, whichever is there.
std::optional<ZarrArray> zarr_of(const OrbaxCheckpoint::Item& item, const std::string& param) {
  for (const auto& [file, format] : {std::pair{".zarray", 2}, std::pair{"zarr.json", 3}}) {
    const std::string key = param + "/" + file;
    if (const auto text = item.read(key, kMaxZarrayBytes)) {
      return parse_zarr_metadata({text->data(), text->size()}, format, item.dir + "/" + key);
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_orbax_checkpoint(const std::string& dir) {
  if (present(fs::path(dir) / kMetadataFile)) return false;
  return present(fs::path(dir) / kTreeMetadata) || !item_names(dir).empty();
}

bool is_finished_orbax_checkpoint(const std::string& dir) {
  return is_orbax_checkpoint(dir) && !tmp_named(dir) && has_commit_record(dir);
}

OrbaxCheckpoint OrbaxCheckpoint::open(const std::string& dir) {
  check_finished(dir);
  OrbaxCheckpoint out;
  out.dir_ = dir;
  out.metadata_ = step_metadata(dir);
  std::vector<std::pair<std::string, std::string>> items;  // (name prefix, directory)
  if (present(fs::path(dir) / kTreeMetadata)) {
    items.emplace_back("", dir);
  } else {
    const auto names = item_names(dir);
    for (const auto& n : names) {
      items.emplace_back(names.size() == 1 && n == "default" ? "" : n + "/",
                         (fs::path(dir) / n).string());
    }
  }
  if (items.empty()) {
    throw Error(
        fmt::format("checkpoint: {} holds no {} (not an Orbax checkpoint)", dir, kTreeMetadata));
  }
  for (const auto& [prefix, item_dir] : items) {
    const std::string file = item_dir + "/" + kTreeMetadata;
    const json meta = read_json(item_dir, kTreeMetadata);
    if (!meta.is_object() || !meta.contains("tree_metadata") ||
        !meta["tree_metadata"].is_object()) {
      throw Error(
          fmt::format("checkpoint: {} has no \"tree_metadata\" object (written by an "
                      "Orbax before 0.5, which spmd does not read)",
                      file));
    }
    auto item = std::make_shared<Item>();
    item->dir = item_dir;
    const bool ocdbt = meta.contains("use_ocdbt") && meta["use_ocdbt"].is_boolean()
                           ? meta["use_ocdbt"].get<bool>()
                           : present(fs::path(item_dir) / "manifest.ocdbt");
    if (ocdbt) item->ocdbt = OcdbtStore::open(item_dir);
    for (const auto& [path, entry] : meta["tree_metadata"].items()) {
      const auto keys = leaf_keys(entry, file);
      const json value = entry.value("value_metadata", json::object());
      if (value.is_object() && value.value("skip_deserialize", false)) continue;
      const std::string name = prefix + fmt::format("{}", fmt::join(keys, "/"));
      const std::string param = fmt::format("{}", fmt::join(keys, "."));
      auto zarr = zarr_of(*item, param);
      if (!zarr) continue;  // not an array (a string, None, an empty node): nothing to restore
      out.infos_[name] = ArrayInfo{zarr->dtype, zarr->shape};
      out.leaves_[name] = std::make_shared<Leaf>(Leaf{item, param, std::move(*zarr)});
    }
  }
  return out;
}

Array OrbaxCheckpoint::restore(const std::string& name, const Sharding& sharding) const {
  const auto it = leaves_.find(name);
  if (it == leaves_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, leaf] : leaves_) names.push_back(n);
    throw InvalidArgument(
        fmt::format("checkpoint: the Orbax checkpoint {} has no array \"{}\"; it holds \"{}\"",
                    dir_, name, fmt::join(names, "\", \"")));
  }
  const Leaf& leaf = *it->second;
  const ChunkedArray chunked{leaf.zarr.dtype, leaf.zarr.shape, leaf.zarr.chunks};
  const uint64_t max_stored = zarr_max_stored_bytes(leaf.zarr);
  return restore_chunked(chunked, sharding, fmt::format("array \"{}\" of {}", name, dir_),
                         [&](const std::vector<int64_t>& coords, std::span<char> out) {
                           const std::string key =
                               leaf.param + "/" + zarr_chunk_key(leaf.zarr, coords);
                           decode_zarr_chunk(leaf.zarr, leaf.item->read(key, max_stored), out,
                                             leaf.item->dir + "/" + key);
                         });
}

}  // namespace spmd::checkpoint
