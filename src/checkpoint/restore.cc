// Restoring: each process reads the chunks its devices need under the target sharding (each
// once, checked against its checksum, in parallel) and cuts every device's box out of them.
// Nothing read is trusted: files are opened as regular files beneath the checkpoint only
// (safe_open.h), the metadata is validated (metadata.h) and checked against each array's .zarray,
// and every allocation is sized from validated numbers and fails as an error naming what it was
// for.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zstd.h>

#include <filesystem>
#include <map>

#include "checkpoint/chunk_io.h"
#include "checkpoint/chunked_restore.h"
#include "checkpoint/commit.h"
#include "checkpoint/metadata.h"
#include "checkpoint/names.h"
#include "checkpoint/orbax_checkpoint.h"
#include "spmd/checkpoint.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;

CheckpointRecord read_record(const std::string& dir) {
  if (!is_committed(dir)) {
    throw FailedPrecondition(fmt::format(
        "checkpoint: {} is not a committed checkpoint (no {} file: it does not exist, is still "
        "being written, or its save failed)",
        dir, kCommitFile));
  }
  const RegularFile file = RegularFile::open_beneath(dir, {kMetadataFile});
  const Buffer text = read_file(file, kMaxMetadataBytes);
  return decode_record(std::string(text.begin(), text.end()), file.path());
}

// The file `leaf` (its .zarray, or a chunk key) of the array in directories `path` beneath `dir`.
RegularFile open_array_file(const std::string& dir, std::vector<std::string> path,
                            const std::string& leaf) {
  path.push_back(leaf);
  return RegularFile::open_beneath(dir, path);
}

// Reads chunk `key` of array `name` (checked against its checksum) into `out`, a whole chunk's
// bytes. A compressed chunk is read only up to the largest zstd frame of out.size() bytes.
void read_chunk(const std::string& dir, const std::vector<std::string>& path,
                const std::string& key, const ArrayRecord& a, std::span<char> out) {
  const auto sum = a.checksums.find(key);
  const RegularFile chunk = open_array_file(dir, path, key);
  const std::string& file = chunk.path();
  if (sum == a.checksums.end()) {  // decode_record checked that every chunk is listed
    throw Error(fmt::format("checkpoint: {} lists no checksum for chunk {}", kMetadataFile, file));
  }
  auto verify = [&](const std::string& got) {
    if (got != sum->second) {
      throw Error(fmt::format(
          "checkpoint: chunk {} is corrupted or truncated: its checksum is {}, the metadata says "
          "{}",
          file, got, sum->second));
    }
  };
  if (a.compression == Compression::kNone) {
    verify(read_file_into(chunk, out));
    return;
  }
  const Buffer stored = read_file(chunk, ZSTD_compressBound(out.size()));
  verify(checksum(stored));
  decode_chunk(stored, a.compression, out, file);
}

// Refuses `a` when its .zarray disagrees with the metadata (a reader of either would see another
// array).
void check_array_files(const std::string& dir, const std::vector<std::string>& path,
                       const ArrayRecord& a) {
  const RegularFile zarray = open_array_file(dir, path, ".zarray");
  const Buffer text = read_file(zarray, kMaxZarrayBytes);
  check_zarray(std::string(text.begin(), text.end()), a, zarray.path());
}

Array restore_array(const std::string& dir, const std::string& name, Format format,
                    const ArrayRecord& a, const Sharding& sharding) {
  const std::vector<std::string> path = array_path(name, format);
  check_array_files(dir, path, a);
  const ChunkedArray chunked{a.dtype, a.shape, a.chunks};
  return restore_chunked(chunked, sharding, fmt::format("array \"{}\" of {}", name, dir),
                         [&](const std::vector<int64_t>& coords, std::span<char> out) {
                           read_chunk(dir, path, chunk_key(coords), a, out);
                         });
}

}  // namespace

bool is_committed(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kCommitFile, ec) || is_finished_orbax_checkpoint(dir);
}

Metadata read_metadata(const std::string& dir) {
  if (is_orbax_checkpoint(dir)) return OrbaxCheckpoint::open(dir).metadata();
  return read_record(dir).metadata;
}

std::map<std::string, ArrayInfo> read_array_info(const std::string& dir) {
  if (is_orbax_checkpoint(dir)) return OrbaxCheckpoint::open(dir).arrays();
  std::map<std::string, ArrayInfo> out;
  for (const auto& [name, a] : read_record(dir).arrays) out[name] = ArrayInfo{a.dtype, a.shape};
  return out;
}

Tree restore(const std::string& dir, const ShardingTree& targets) {
  if (is_orbax_checkpoint(dir)) {
    const OrbaxCheckpoint orbax = OrbaxCheckpoint::open(dir);
    Tree out;
    for (const auto& [name, sharding] : targets) {
      if (!sharding) throw InvalidArgument(fmt::format("checkpoint: no sharding for \"{}\"", name));
      out.emplace(name, orbax.restore(name, *sharding));
    }
    return out;
  }
  const CheckpointRecord record = read_record(dir);
  Tree out;
  for (const auto& [name, sharding] : targets) {
    const auto it = record.arrays.find(name);
    if (it == record.arrays.end()) {
      std::vector<std::string> names;
      for (const auto& [n, a] : record.arrays) names.push_back(n);
      throw InvalidArgument(fmt::format("checkpoint: {} has no array \"{}\"; it holds \"{}\"", dir,
                                        name, fmt::join(names, "\", \"")));
    }
    if (!sharding) throw InvalidArgument(fmt::format("checkpoint: no sharding for \"{}\"", name));
    out.emplace(name, restore_array(dir, name, record.format, it->second, *sharding));
  }
  return out;
}

Tree restore(const std::string& dir, const Sharding& sharding) {
  if (is_orbax_checkpoint(dir)) {
    const OrbaxCheckpoint orbax = OrbaxCheckpoint::open(dir);
    Tree out;
    for (const auto& [name, info] : orbax.arrays())
      out.emplace(name, orbax.restore(name, sharding));
    return out;
  }
  ShardingTree targets;
  for (const auto& [name, info] : read_array_info(dir)) targets[name] = sharding.clone();
  return restore(dir, targets);
}

}  // namespace spmd::checkpoint
