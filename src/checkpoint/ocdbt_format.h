// OCDBT's on-disk encodings (TensorStore's "Optionally-Cooperative Distributed B+Tree", the
// key-value store Orbax writes checkpoints into by default), decoded from bytes: a manifest and a
// B+tree node. The format is TensorStore's documented one (kvstore/ocdbt/index.rst): each starts
// with a magic number, its length, a format version and a compression (none or zstd), and ends
// with a CRC-32C of everything before it. Pure functions; nothing read is trusted: every count,
// length, offset, path and key is checked against the bytes that hold it, a decompressed body may
// not exceed the bound the caller gives, and every failure is an spmd::Error naming `where` and
// the byte offset.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace spmd::checkpoint {

// Where an encoded node or an out-of-line value lies: bytes [offset, offset + length) of a data
// file.
struct OcdbtRef {
  std::string file;  // its path relative to the database's root, as the data file table spells it
  std::string base;  // the "transitive path" that the referenced node's own data file table extends
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct OcdbtConfig {
  // "numbered": the version tree lives in manifest.<16 hex digits> files, not in manifest.ocdbt.
  bool numbered = false;
  uint64_t max_inline_value_bytes = 0;
  // The largest a B+tree node may decompress to.
  uint64_t max_decoded_node_bytes = 0;
  uint8_t version_tree_arity_log2 = 0;
};

// A committed version (generation) of the database: the root of its B+tree.
struct OcdbtVersion {
  uint64_t generation = 0;
  uint8_t root_height = 0;
  std::optional<OcdbtRef> root;  // empty for an empty database
  uint64_t num_keys = 0;
};

struct OcdbtManifest {
  OcdbtConfig config;
  // The most recent versions, oldest first (empty in a numbered database's manifest.ocdbt). Older
  // versions, in version tree nodes, are validated but not kept: a restore reads the latest.
  std::vector<OcdbtVersion> versions;
};

// A key of a leaf node, relative to the prefix its path from the root implies, and its value:
// inline bytes or a reference.
struct OcdbtLeafEntry {
  std::string key;
  std::variant<std::string, OcdbtRef> value;
};

// A child of an interior node: the first key of its subtree (relative), how many bytes of that
// key every key in the subtree shares (they prefix the child's keys), and where the child lies.
struct OcdbtChildEntry {
  std::string key;
  uint64_t subtree_prefix_length = 0;
  OcdbtRef node;
};

struct OcdbtNode {
  uint8_t height = 0;                     // 0 for a leaf
  std::vector<OcdbtLeafEntry> leaves;     // when height == 0
  std::vector<OcdbtChildEntry> children;  // when height > 0
};

// The largest manifest body spmd decompresses. A manifest holds the configuration and at most a
// few hundred version references.
inline constexpr uint64_t kMaxManifestBodyBytes = uint64_t{16} << 20;

// Decodes a manifest (manifest.ocdbt or manifest.<generation>).
OcdbtManifest decode_ocdbt_manifest(std::span<const char> bytes, const std::string& where);

// Decodes a B+tree node reached through a reference whose `base` is `transitive`; its body may
// decompress to at most `max_body_bytes`.
OcdbtNode decode_ocdbt_node(std::span<const char> bytes, const std::string& transitive,
                            uint64_t max_body_bytes, const std::string& where);

}  // namespace spmd::checkpoint
