#include "checkpoint/ocdbt_format.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "checkpoint/byte_reader.h"
#include "checkpoint/crc32c.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

constexpr uint32_t kManifestMagic = 0x0cdb3a2a;
constexpr uint32_t kNodeMagic = 0x0cdb20de;
// TensorStore's limits on a key and on a data file's path.
constexpr uint64_t kMaxKeyLength = 65535;
constexpr uint64_t kMaxPathLength = 65535;
constexpr uint64_t kMissing = std::numeric_limits<uint64_t>::max();

struct ZstdDctx {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~ZstdDctx() { ZSTD_freeDCtx(ctx); }
  ZstdDctx() = default;
  ZstdDctx(const ZstdDctx&) = delete;
  ZstdDctx& operator=(const ZstdDctx&) = delete;
};

// `compressed`, one or more zstd frames, decompressed to at most `max_bytes`.
std::string unzstd(std::span<const char> compressed, uint64_t max_bytes, const ByteReader& at) {
  ZstdDctx d;
  if (d.ctx == nullptr) throw std::bad_alloc();
  std::string out;
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  size_t used = 0;
  size_t pending = 0;  // nonzero while a frame is unfinished
  bool full = true;    // the last call filled its output: more may be waiting
  while (in.pos < in.size || full) {
    if (used == max_bytes) {
      at.fail(fmt::format("its body decompresses to more than {} bytes", max_bytes));
    }
    out.resize(std::min<uint64_t>(max_bytes, std::max<size_t>(used * 2, 4096)));
    ZSTD_outBuffer o{out.data(), out.size(), used};
    pending = ZSTD_decompressStream(d.ctx, &o, &in);
    if (ZSTD_isError(pending) != 0) {
      at.fail(fmt::format("its zstd body does not decode: {}", ZSTD_getErrorName(pending)));
    }
    used = o.pos;
    full = o.pos == o.size;
  }
  if (pending != 0) at.fail("its zstd body is truncated");
  out.resize(used);
  return out;
}

// The body of an encoded manifest or node after its checks: magic, length, CRC-32C, version 0 and
// a known compression. `kind` names it in errors.
std::string open_frame(std::span<const char> bytes, uint32_t magic, const char* kind,
                       uint64_t max_body, const std::string& where) {
  ByteReader r(bytes, where);
  if (bytes.size() < 16) {
    r.fail(fmt::format("{} bytes are too few for an OCDBT {}", bytes.size(), kind));
  }
  const uint32_t got = r.u32be("magic number");
  if (got != magic) {
    r.fail(
        fmt::format("it is not an OCDBT {}: it starts with {:08x}, not {:08x}", kind, got, magic));
  }
  const uint64_t length = r.u64le("length");
  if (length != bytes.size()) {
    r.fail(fmt::format("its header says {} bytes, but {} are there (truncated or overwritten)",
                       length, bytes.size()));
  }
  const auto body_and_crc = bytes.first(bytes.size() - 4);
  ByteReader tail(bytes.subspan(bytes.size() - 4), where);
  const uint32_t stored = tail.u32le("checksum");
  const uint32_t computed = crc32c(body_and_crc);
  if (stored != computed) {
    r.fail(fmt::format("its CRC-32C is {:08x}, the stored one {:08x}: the {} is corrupted",
                       computed, stored, kind));
  }
  ByteReader h(body_and_crc, where);
  h.bytes(12, "header");
  const uint64_t version = h.varint("format version");
  if (version != 0) h.fail(fmt::format("format version {} is not 0, the only one known", version));
  const uint64_t compression = h.varint("compression format");
  const auto rest = h.bytes(h.remaining(), "body");
  if (compression == 0) {
    if (rest.size() > max_body) h.fail(fmt::format("its body exceeds {} bytes", max_body));
    return {rest.data(), rest.size()};
  }
  if (compression == 1) return unzstd(rest, max_body, h);
  h.fail(fmt::format("compression format {} is neither 0 (none) nor 1 (zstd)", compression));
}

// A data file table: each file's full path and the transitive path of the nodes it holds.
struct DataFile {
  std::string path;
  std::string base;
};

std::vector<DataFile> read_data_files(ByteReader& r, const std::string& transitive) {
  const uint64_t n = r.varint_at_most(r.remaining() / 2, "number of data files");
  std::vector<uint64_t> prefix(n, 0);
  std::vector<uint64_t> suffix(n);
  std::vector<uint64_t> base(n);
  for (uint64_t i = 1; i < n; ++i) prefix[i] = r.varint_at_most(kMaxPathLength, "path prefix");
  for (auto& s : suffix) s = r.varint_at_most(r.remaining(), "path suffix length");
  for (auto& b : base) b = r.varint_at_most(kMaxPathLength, "base path length");
  std::vector<DataFile> files(n);
  std::string previous;
  for (uint64_t i = 0; i < n; ++i) {
    if (prefix[i] > previous.size()) {
      r.fail(fmt::format("data file {} shares {} bytes with a path of {}", i, prefix[i],
                         previous.size()));
    }
    std::string path = previous.substr(0, prefix[i]);
    path += r.text(suffix[i], "data file path");
    if (path.size() + transitive.size() > kMaxPathLength) r.fail("a data file path is too long");
    if (base[i] > path.size()) {
      r.fail(fmt::format("data file {}'s base path of {} bytes exceeds its path", i, base[i]));
    }
    files[i] = {transitive + path, transitive + path.substr(0, base[i])};
    previous = std::move(path);
  }
  return files;
}

// A column of `n` data file references (ids, offsets, lengths), missing ones allowed where
// `allow_missing` (an empty tree's root).
std::vector<std::optional<OcdbtRef>> read_refs(ByteReader& r, const std::vector<DataFile>& files,
                                               uint64_t n, bool allow_missing) {
  std::vector<uint64_t> ids(n);
  std::vector<uint64_t> offsets(n);
  std::vector<uint64_t> lengths(n);
  for (auto& id : ids) id = r.varint("data file id");
  for (auto& o : offsets) o = r.varint("data file offset");
  for (auto& l : lengths) l = r.varint("data file length");
  std::vector<std::optional<OcdbtRef>> refs(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (allow_missing && offsets[i] == kMissing && lengths[i] == kMissing) continue;
    if (ids[i] >= files.size()) {
      r.fail(fmt::format("data file id {} is not among the {} files listed", ids[i], files.size()));
    }
    if (offsets[i] > uint64_t{std::numeric_limits<int64_t>::max()} - lengths[i]) {
      r.fail(fmt::format("offset {} + length {} overflows", offsets[i], lengths[i]));
    }
    refs[i] = OcdbtRef{files[ids[i]].path, files[ids[i]].base, offsets[i], lengths[i]};
  }
  return refs;
}

// A column of `n` varints (statistics, kept only to be skipped in order).
void skip_varints(ByteReader& r, uint64_t n, const char* field) {
  for (uint64_t i = 0; i < n; ++i) r.varint(field);
}

std::vector<OcdbtVersion> read_versions(ByteReader& r, const std::vector<DataFile>& files,
                                        uint8_t arity_log2) {
  const uint64_t n = r.varint_at_most(uint64_t{1} << arity_log2, "number of versions");
  if (n == 0) r.fail("a manifest references no version");
  std::vector<OcdbtVersion> versions(n);
  for (uint64_t i = 0; i < n; ++i) {
    versions[i].generation = r.varint("generation number");
    if (versions[i].generation == 0 ||
        (i > 0 && versions[i].generation <= versions[i - 1].generation)) {
      r.fail("generation numbers are not positive and increasing");
    }
  }
  for (auto& v : versions) v.root_height = r.u8("root height");
  const auto roots = read_refs(r, files, n, /*allow_missing=*/true);
  for (uint64_t i = 0; i < n; ++i) versions[i].root = roots[i];
  for (auto& v : versions) v.num_keys = r.varint("number of keys");
  skip_varints(r, 2 * n, "tree statistics");
  for (uint64_t i = 0; i < n; ++i) r.u64le("commit time");
  return versions;
}

// The manifest's references to older version tree nodes: checked, not kept.
void skip_version_nodes(ByteReader& r, const std::vector<DataFile>& files) {
  const uint64_t n = r.varint_at_most(64, "number of version tree nodes");
  skip_varints(r, n, "generation number");
  read_refs(r, files, n, /*allow_missing=*/false);
  skip_varints(r, n, "number of generations");
  for (uint64_t i = 0; i < n; ++i) r.u64le("commit time");
  for (uint64_t i = 0; i < n; ++i) r.u8("version node height");
}

OcdbtConfig read_config(ByteReader& r) {
  OcdbtConfig c;
  r.bytes(16, "uuid");
  const uint64_t kind = r.varint("manifest kind");
  if (kind > 1)
    r.fail(fmt::format("manifest kind {} is neither 0 (single) nor 1 (numbered)", kind));
  c.numbered = kind == 1;
  c.max_inline_value_bytes = r.varint("max_inline_value_bytes");
  c.max_decoded_node_bytes = r.varint("max_decoded_node_bytes");
  c.version_tree_arity_log2 = r.u8("version_tree_arity_log2");
  if (c.version_tree_arity_log2 == 0 || c.version_tree_arity_log2 > 16) {
    r.fail(fmt::format("version_tree_arity_log2 {} is outside [1, 16]", c.version_tree_arity_log2));
  }
  const uint64_t method = r.varint("compression method");
  if (method == 1) {
    r.u32le("zstd level");
  } else if (method != 0) {
    r.fail(fmt::format("compression method {} is neither 0 (none) nor 1 (zstd)", method));
  }
  return c;
}

// The keys of a node's `n` entries, each in full (relative to the node's prefix), strictly
// increasing; for an interior node also each subtree's common prefix length.
std::vector<std::string> read_keys(ByteReader& r, uint64_t n, std::vector<uint64_t>* subtree) {
  std::vector<uint64_t> prefix(n, 0);
  std::vector<uint64_t> suffix(n);
  for (uint64_t i = 1; i < n; ++i) prefix[i] = r.varint_at_most(kMaxKeyLength, "key prefix length");
  for (auto& s : suffix) s = r.varint_at_most(r.remaining(), "key suffix length");
  if (subtree != nullptr) {
    subtree->resize(n);
    for (auto& s : *subtree) s = r.varint_at_most(kMaxKeyLength, "subtree prefix length");
  }
  std::vector<std::string> keys(n);
  for (uint64_t i = 0; i < n; ++i) {
    const std::string& previous = i > 0 ? keys[i - 1] : keys[0];
    if (prefix[i] > (i > 0 ? previous.size() : 0)) {
      r.fail(fmt::format("key {} shares more bytes with the one before than it has", i));
    }
    keys[i] = previous.substr(0, prefix[i]);
    keys[i] += r.text(suffix[i], "key");
    if (keys[i].size() > kMaxKeyLength) r.fail("a key exceeds 65535 bytes");
    if (i > 0 && keys[i] <= keys[i - 1]) r.fail("keys are not in increasing order");
    if (subtree != nullptr && (*subtree)[i] > keys[i].size()) {
      r.fail(fmt::format("key {}'s subtree prefix is longer than the key", i));
    }
  }
  return keys;
}

void read_leaf_entries(ByteReader& r, const std::vector<DataFile>& files, uint64_t n,
                       OcdbtNode& node) {
  const std::vector<std::string> keys = read_keys(r, n, nullptr);
  std::vector<uint64_t> lengths(n);
  for (auto& l : lengths) l = r.varint("value length");
  std::vector<bool> indirect(n);
  uint64_t num_indirect = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t kind = r.u8("value kind");
    if (kind > 1)
      r.fail(fmt::format("value kind {} is neither 0 (inline) nor 1 (out of line)", kind));
    indirect[i] = kind == 1;
    num_indirect += kind;
  }
  std::vector<uint64_t> ids(num_indirect);
  std::vector<uint64_t> offsets(num_indirect);
  for (auto& id : ids) id = r.varint_at_most(files.empty() ? 0 : files.size() - 1, "data file id");
  if (num_indirect > 0 && files.empty()) r.fail("an out-of-line value but no data file");
  for (auto& o : offsets) o = r.varint("data file offset");
  node.leaves.resize(n);
  for (uint64_t i = 0, k = 0; i < n; ++i) {
    node.leaves[i].key = keys[i];
    if (!indirect[i]) {
      node.leaves[i].value = std::string(r.text(lengths[i], "inline value"));
      continue;
    }
    if (offsets[k] > uint64_t{std::numeric_limits<int64_t>::max()} - lengths[i]) {
      r.fail(fmt::format("offset {} + length {} overflows", offsets[k], lengths[i]));
    }
    node.leaves[i].value = OcdbtRef{files[ids[k]].path, files[ids[k]].base, offsets[k], lengths[i]};
    ++k;
  }
}

void read_interior_entries(ByteReader& r, const std::vector<DataFile>& files, uint64_t n,
                           OcdbtNode& node) {
  std::vector<uint64_t> subtree;
  const std::vector<std::string> keys = read_keys(r, n, &subtree);
  const auto refs = read_refs(r, files, n, /*allow_missing=*/false);
  skip_varints(r, 3 * n, "subtree statistics");
  node.children.resize(n);
  for (uint64_t i = 0; i < n; ++i) node.children[i] = {keys[i], subtree[i], *refs[i]};
}

}  // namespace

OcdbtManifest decode_ocdbt_manifest(std::span<const char> bytes, const std::string& where) {
  const std::string body =
      open_frame(bytes, kManifestMagic, "manifest", kMaxManifestBodyBytes, where);
  ByteReader r(body, where + " (its decompressed body)");
  OcdbtManifest m;
  m.config = read_config(r);
  if (!m.config.numbered) {
    const auto files = read_data_files(r, "");
    m.versions = read_versions(r, files, m.config.version_tree_arity_log2);
    skip_version_nodes(r, files);
  }
  if (!r.at_end()) r.fail(fmt::format("{} bytes follow the manifest", r.remaining()));
  return m;
}

OcdbtNode decode_ocdbt_node(std::span<const char> bytes, const std::string& transitive,
                            uint64_t max_body_bytes, const std::string& where) {
  const std::string body = open_frame(bytes, kNodeMagic, "B+tree node", max_body_bytes, where);
  ByteReader r(body, where + " (its decompressed body)");
  OcdbtNode node;
  node.height = r.u8("height");
  const auto files = read_data_files(r, transitive);
  const uint64_t n = r.varint_at_most(r.remaining(), "number of entries");
  if (n == 0) r.fail("a B+tree node has no entries");
  if (node.height == 0) {
    read_leaf_entries(r, files, n, node);
  } else {
    read_interior_entries(r, files, n, node);
  }
  if (!r.at_end()) r.fail(fmt::format("{} bytes follow the node's entries", r.remaining()));
  return node;
}

}  // namespace spmd::checkpoint
