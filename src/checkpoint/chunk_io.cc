// zstd, XXH3 and POSIX file I/O for chunk files.
#include "checkpoint/chunk_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "checkpoint/mapped_copy.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

Error io_error(const char* what, const std::string& path) {
  return Error(fmt::format("checkpoint: cannot {} {}: {}", what, path, std::strerror(errno)));
}

// Files are written and read in pieces of this size, each hashed right before it is written or
// right after it is read, while it is in cache: the checksum then costs little beyond the copy.
constexpr size_t kPiece = size_t{4} << 20;
// Files at least this large are read through a mapping (mapped_copy.h); smaller ones with read(),
// where the mapping's set-up would cost more than it saves.
constexpr size_t kMapFrom = size_t{1} << 20;

std::string digest_text(XXH64_hash_t h) { return fmt::format("xxh3-64:{:016x}", h); }

// An XXH3 streaming state, freed on every path out.
struct Hasher {
  XXH3_state_t* state = XXH3_createState();
  Hasher() {
    if (state == nullptr) throw std::bad_alloc();
    XXH3_64bits_reset(state);
  }
  ~Hasher() { XXH3_freeState(state); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void update(const char* p, size_t n) { XXH3_64bits_update(state, p, n); }
  std::string text() const { return digest_text(XXH3_64bits_digest(state)); }
};

// Closes a descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string checksum(std::span<const char> bytes) {
  return digest_text(XXH3_64bits(bytes.data(), bytes.size()));
}

Encoded encode_chunk(std::span<const char> raw, Compression compression, int level) {
  Encoded out;
  if (compression == Compression::kNone) {
    out.stored = raw;
    return out;
  }
  out.owned.resize(ZSTD_compressBound(raw.size()));
  const size_t n = ZSTD_compress(out.owned.data(), out.owned.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(n)) {
    throw Error(fmt::format("checkpoint: zstd failed: {}", ZSTD_getErrorName(n)));
  }
  out.owned.resize(n);
  out.stored = out.owned;
  return out;
}

void decode_chunk(std::span<const char> stored, Compression compression, std::span<char> out,
                  const std::string& file) {
  if (compression == Compression::kNone) {
    if (stored.size() != out.size()) {
      throw Error(fmt::format("checkpoint: chunk {} holds {} bytes, expected {} (truncated?)", file,
                              stored.size(), out.size()));
    }
    if (!out.empty() && stored.data() != out.data()) {
      std::memcpy(out.data(), stored.data(), out.size());
    }
    return;
  }
  const unsigned long long content = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
      content != out.size()) {
    throw Error(
        fmt::format("checkpoint: chunk {} is not a zstd frame of {} bytes (truncated or corrupted)",
                    file, out.size()));
  }
  const size_t n = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(n) || n != out.size()) {
    throw Error(fmt::format("checkpoint: chunk {} does not decompress: {}", file,
                            ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output"));
  }
}

std::string write_file_durably(const std::string& path, std::span<const char> bytes) {
  const Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw io_error("create", path);
  Hasher hash;
  size_t hashed = 0;
  size_t done = 0;
  while (done < bytes.size()) {
    const size_t end = std::min(bytes.size(), done + kPiece);
    if (hashed < end) {
      hash.update(bytes.data() + hashed, end - hashed);
      hashed = end;
    }
    const ssize_t n = ::write(f.fd, bytes.data() + done, end - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("write", path);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(f.fd) != 0) throw io_error("fsync", path);
  return hash.text();
}

Buffer read_file(const RegularFile& file, uint64_t max_bytes) {
  if (file.size() > max_bytes) {
    throw Error(fmt::format("checkpoint: {} holds {} bytes, more than the {} such a file may hold",
                            file.path(), file.size(), max_bytes));
  }
  Buffer out;
  try {
    out.resize(static_cast<size_t>(file.size()));
  } catch (const std::bad_alloc&) {
    throw Error(
        fmt::format("checkpoint: cannot allocate {} bytes to read {}", file.size(), file.path()));
  }
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(file.fd(), out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("read", file.path());
    }
    if (n == 0) break;  // shrank under us: the short result is caught by the caller's checks
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

Buffer read_file(const std::string& path, uint64_t max_bytes) {
  return read_file(RegularFile::open(path), max_bytes);
}

Buffer read_range(const RegularFile& file, uint64_t offset, uint64_t length) {
  if (offset > file.size() || length > file.size() - offset) {
    throw Error(fmt::format(
        "checkpoint: {} holds {} bytes; bytes [{}, {}) are past its end (it is truncated, or "
        "what refers to it is wrong)",
        file.path(), file.size(), offset, offset + length));
  }
  Buffer out;
  try {
    out.resize(static_cast<size_t>(length));
  } catch (const std::bad_alloc&) {
    throw Error(
        fmt::format("checkpoint: cannot allocate {} bytes to read {}", length, file.path()));
  }
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(file.fd(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("read", file.path());
    }
    if (n == 0) throw Error(fmt::format("checkpoint: {} shrank while read", file.path()));
    done += static_cast<size_t>(n);
  }
  return out;
}

namespace {

// read_file_into() with read(): the bytes arrive in `out` piece by piece, each hashed as it comes.
void read_pieces(int fd, const std::string& path, std::span<char> out, Hasher& hash) {
  size_t done = 0;
  while (done < out.size()) {
    const size_t want = std::min(kPiece, out.size() - done);
    const ssize_t n = ::read(fd, out.data() + done, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("read", path);
    }
    if (n == 0) throw Error(fmt::format("checkpoint: chunk {} shrank while read", path));
    hash.update(out.data() + done, static_cast<size_t>(n));
    done += static_cast<size_t>(n);
  }
}

// read_file_into() through a read-only mapping; false when the file cannot be mapped (the caller
// reads it instead).
bool read_mapped(int fd, const std::string& path, std::span<char> out, Hasher& hash) {
  void* mapped = ::mmap(nullptr, out.size(), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (mapped == MAP_FAILED) return false;
  const bool whole = copy_mapped(static_cast<const std::byte*>(mapped),
                                 reinterpret_cast<std::byte*>(out.data()), out.size(), hash.state);
  ::munmap(mapped, out.size());
  if (!whole) throw Error(fmt::format("checkpoint: chunk {} shrank while read", path));
  return true;
}

}  // namespace

std::string read_file_into(const RegularFile& file, std::span<char> out) {
  if (file.size() != out.size()) {
    throw Error(fmt::format("checkpoint: chunk {} holds {} bytes, expected {} (truncated?)",
                            file.path(), file.size(), out.size()));
  }
  Hasher hash;
  if (out.size() < kMapFrom || !read_mapped(file.fd(), file.path(), out, hash)) {
    read_pieces(file.fd(), file.path(), out, hash);
  }
  return hash.text();
}

std::string read_file_into(const std::string& path, std::span<char> out) {
  return read_file_into(RegularFile::open(path), out);
}

void fsync_directory(const std::string& path) {
  const Fd f{::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (f.fd < 0) throw io_error("open the directory", path);
  if (::fsync(f.fd) != 0) throw io_error("fsync the directory", path);
}

}  // namespace spmd::checkpoint
