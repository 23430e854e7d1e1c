// An OCDBT database on the local file system, read-only: the keys of its latest version and
// where each value lies, loaded once when opened (Orbax's checkpoints keep one key per chunk and
// per .zarray, so the index is small), then values read on demand from any thread.
//
// Nothing is trusted: manifests and nodes are decoded by ocdbt_format.h; a data file's path must
// be relative, with no empty, "." or ".." component, and is opened beneath the root refusing
// symbolic links (safe_open.h); a B+tree's heights must descend by one to the leaves; at most
// kMaxKeys keys and kMaxNodes nodes are loaded, so a tree whose nodes refer to each other over and
// over cannot exhaust memory; every failure is an spmd::Error naming the file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "checkpoint/chunk_io.h"
#include "checkpoint/ocdbt_format.h"

namespace spmd::checkpoint {

class OcdbtStore {
 public:
  static constexpr uint64_t kMaxKeys = uint64_t{1} << 24;
  static constexpr uint64_t kMaxNodes = uint64_t{1} << 20;
  // The most a node may decompress to, whatever the configuration says (TensorStore's default
  // is 8 MiB).
  static constexpr uint64_t kMaxNodeBodyBytes = uint64_t{256} << 20;

  // Opens the database under `root`: its manifest.ocdbt (and, for a numbered database, the
  // newest manifest.<generation>), and the B+tree of the latest version.
  static OcdbtStore open(const std::string& root);

  const std::string& root() const { return root_; }
  // Every key, in order.
  std::vector<std::string> keys() const;
  // The value of `key`, nullopt when absent. Throws spmd::Error naming the data file when the
  // value is larger than `max_bytes`, lies past the file's end, or cannot be read.
  std::optional<Buffer> read(const std::string& key, uint64_t max_bytes) const;

 private:
  explicit OcdbtStore(std::string root) : root_(std::move(root)) {}
  void load(const OcdbtRef& node, const std::string& prefix, uint8_t height, uint64_t node_bytes,
            uint64_t& nodes);

  std::string root_;
  std::map<std::string, std::variant<std::string, OcdbtRef>> values_;
};

// The regular file at `relative` (a '/'-separated path from a data file table or a key) beneath
// `root`. Throws spmd::Error naming it when a component is empty, "." or "..", when it is absent,
// or when it is not a regular file reached without symbolic links.
RegularFile open_relative(const std::string& root, const std::string& relative);

}  // namespace spmd::checkpoint
