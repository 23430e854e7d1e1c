// Chunk files: encoding (zstd or raw), checksums, durable writes and checked reads. Every error
// names the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/safe_open.h"
#include "spmd/checkpoint.h"
#include "spmd/host_array.h"

namespace spmd::checkpoint {

// Bytes not zeroed on allocation (they are about to be overwritten).
using Buffer = std::vector<char, spmd::detail::BufferAllocator<char>>;

// The 64-bit XXH3 of `bytes`, as the metadata spells it ("xxh3-64:<16 hex digits>").
std::string checksum(std::span<const char> bytes);

// The bytes to store for a chunk of `raw` bytes: zstd-compressed, or `raw` itself (then `owned`
// stays empty and `stored` points at `raw`).
struct Encoded {
  Buffer owned;
  std::span<const char> stored;
};
Encoded encode_chunk(std::span<const char> raw, Compression compression, int level);

// Decodes `stored` (the contents of `file`) into `out`, which must come out exactly full.
// Throws spmd::Error naming the file when the bytes do not decode to out.size() bytes.
void decode_chunk(std::span<const char> stored, Compression compression, std::span<char> out,
                  const std::string& file);

// Writes `bytes` to `path` (created or truncated), fsyncs it, and returns checksum(bytes),
// computed piece by piece as the pieces are written (while they are in cache). Throws
// spmd::Error naming the file and the system's reason.
std::string write_file_durably(const std::string& path, std::span<const char> bytes);

// The whole of `file`, which may hold at most `max_bytes` (checked before anything is allocated).
// Throws spmd::Error naming the file when it is larger, or when reading or allocating fails.
Buffer read_file(const RegularFile& file, uint64_t max_bytes);
// The same for the regular file at `path` (RegularFile::open).
Buffer read_file(const std::string& path, uint64_t max_bytes);

// Bytes [offset, offset + length) of `file`. Throws spmd::Error naming the file when they lie
// past its end (it is truncated, or the reference to them is wrong) or cannot be read.
Buffer read_range(const RegularFile& file, uint64_t offset, uint64_t length);

// Reads the whole file into `out`, whose size it must have exactly, and returns checksum(out),
// computed piece by piece as the pieces arrive: from a mapping of the file from 1 MiB on (each
// piece hashed, then copied, while in cache: mapped_copy.h), with read() below that. Throws
// spmd::Error naming the file (a size that differs: truncated or grown; a file that shrinks
// while read).
std::string read_file_into(const RegularFile& file, std::span<char> out);
// The same for the regular file at `path` (RegularFile::open).
std::string read_file_into(const std::string& path, std::span<char> out);

// fsyncs a directory, so the entries made in it survive a crash. Throws spmd::Error.
void fsync_directory(const std::string& path);

}  // namespace spmd::checkpoint
