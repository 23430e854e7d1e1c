#include "checkpoint/ocdbt_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;

// The largest manifest file read: a manifest's body is bounded by kMaxManifestBodyBytes, and
// compression only shrinks it.
constexpr uint64_t kMaxManifestFileBytes = kMaxManifestBodyBytes + 4096;

std::vector<std::string> safe_components(const std::string& root, const std::string& relative) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = relative.find('/', start);
    std::string part = relative.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos) {
      throw Error(fmt::format(
          "checkpoint: the OCDBT database {} refers to \"{}\", which is not a path beneath it",
          root, relative));
    }
    parts.push_back(std::move(part));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// The newest manifest.<16 hex digits> of a numbered database.
std::string newest_numbered_manifest(const std::string& root) {
  std::string newest;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() == 25 && name.starts_with("manifest.") &&
        std::all_of(name.begin() + 9, name.end(),
                    [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
      newest = std::max(newest, name);
    }
  }
  if (ec) throw Error(fmt::format("checkpoint: cannot list {}: {}", root, ec.message()));
  if (newest.empty()) {
    throw Error(
        fmt::format("checkpoint: {}/manifest.ocdbt names a numbered OCDBT database, but no "
                    "manifest.<generation> file is there",
                    root));
  }
  return newest;
}

OcdbtManifest read_manifest(const std::string& root, const std::string& name) {
  const RegularFile file = open_relative(root, name);
  const Buffer bytes = read_file(file, kMaxManifestFileBytes);
  return decode_ocdbt_manifest(bytes, file.path());
}

}  // namespace

RegularFile open_relative(const std::string& root, const std::string& relative) {
  return RegularFile::open_beneath(root, safe_components(root, relative));
}

OcdbtStore OcdbtStore::open(const std::string& root) {
  OcdbtManifest manifest = read_manifest(root, "manifest.ocdbt");
  if (manifest.config.numbered) {
    const std::string name = newest_numbered_manifest(root);
    const OcdbtConfig config = manifest.config;
    manifest = read_manifest(root, name);
    if (manifest.config.numbered) {
      throw Error(
          fmt::format("checkpoint: {}/{} holds no versions (it is numbered too)", root, name));
    }
    manifest.config.max_decoded_node_bytes = config.max_decoded_node_bytes;
  }
  OcdbtStore store(root);
  const OcdbtVersion& latest = manifest.versions.back();
  if (!latest.root) return store;  // an empty database
  const uint64_t node_bytes = std::min(manifest.config.max_decoded_node_bytes, kMaxNodeBodyBytes);
  uint64_t nodes = 0;
  store.load(*latest.root, "", latest.root_height, node_bytes, nodes);
  return store;
}

void OcdbtStore::load(const OcdbtRef& ref, const std::string& prefix, uint8_t height,
                      uint64_t node_bytes, uint64_t& nodes) {
  if (++nodes > kMaxNodes) {
    throw Error(fmt::format("checkpoint: the OCDBT database {} has more than {} B+tree nodes",
                            root_, kMaxNodes));
  }
  const RegularFile file = open_relative(root_, ref.file);
  // A compressed node is at most about its decompressed size; allow zstd's worst case.
  if (ref.length > node_bytes + node_bytes / 128 + 4096) {
    throw Error(
        fmt::format("checkpoint: {} refers to a B+tree node of {} bytes in {}, more than "
                    "a node may hold",
                    root_, ref.length, file.path()));
  }
  const Buffer bytes = read_range(file, ref.offset, ref.length);
  const std::string where = fmt::format("the B+tree node at {}+{}", file.path(), ref.offset);
  const OcdbtNode node = decode_ocdbt_node(bytes, ref.base, node_bytes, where);
  if (node.height != height) {
    throw Error(fmt::format("checkpoint: {} has height {} where its parent says {}", where,
                            node.height, height));
  }
  for (const auto& leaf : node.leaves) {
    if (values_.size() >= kMaxKeys) {
      throw Error(fmt::format("checkpoint: the OCDBT database {} holds more than {} keys", root_,
                              kMaxKeys));
    }
    values_.insert_or_assign(prefix + leaf.key, leaf.value);
  }
  for (const auto& child : node.children) {
    load(child.node, prefix + child.key.substr(0, child.subtree_prefix_length), height - 1,
         node_bytes, nodes);
  }
}

std::vector<std::string> OcdbtStore::keys() const {
  std::vector<std::string> out;
  out.reserve(values_.size());
  for (const auto& [key, value] : values_) out.push_back(key);
  return out;
}

std::optional<Buffer> OcdbtStore::read(const std::string& key, uint64_t max_bytes) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (const auto* inline_value = std::get_if<std::string>(&it->second)) {
    if (inline_value->size() > max_bytes) {
      throw Error(fmt::format("checkpoint: key \"{}\" of {} holds {} bytes, more than {}", key,
                              root_, inline_value->size(), max_bytes));
    }
    return Buffer(inline_value->begin(), inline_value->end());
  }
  const auto& ref = std::get<OcdbtRef>(it->second);
  const RegularFile file = open_relative(root_, ref.file);
  if (ref.length > max_bytes) {
    throw Error(
        fmt::format("checkpoint: key \"{}\" of {} is {} bytes in {}, more than the {} it "
                    "may hold",
                    key, root_, ref.length, file.path(), max_bytes));
  }
  return read_range(file, ref.offset, ref.length);
}

}  // namespace spmd::checkpoint
