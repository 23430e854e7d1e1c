// Reading chunk files through a mapping (checkpoint/mapped_copy.h, chunk_io.h): the bytes and
// the checksum are read()'s, and a file that shrinks under the mapping is an error, not a SIGBUS
// that kills the process. Each test case runs in a process of its own (gtest_discover_tests), so
// the SIGBUS handler is installed fresh in each.
#include "checkpoint/mapped_copy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csetjmp>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/chunk_io.h"
#include "spmd/error.h"

namespace {

namespace fs = std::filesystem;
using spmd::checkpoint::copy_mapped;

// A file of `n` pseudo-random bytes in a fresh directory, removed at the end.
struct TempFile {
  fs::path dir = fs::temp_directory_path() / ("spmd-mapped-" + std::to_string(::getpid()));
  std::string path = (dir / "chunk").string();
  std::vector<char> bytes;
  explicit TempFile(size_t n) : bytes(n) {
    fs::create_directories(dir);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (char& c : bytes) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      c = static_cast<char>(x >> 56);
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_EQ(::write(fd, bytes.data(), n), static_cast<ssize_t>(n));
    ::close(fd);
  }
  ~TempFile() { fs::remove_all(dir); }
};

// A read-only mapping of the whole file.
struct Mapping {
  size_t n;
  std::byte* at;
  Mapping(const std::string& path, size_t n) : n(n) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    at = static_cast<std::byte*>(::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0));
    ::close(fd);
    EXPECT_NE(at, MAP_FAILED);
  }
  ~Mapping() { ::munmap(at, n); }
};

std::string xxh3_text(const std::vector<char>& bytes) { return spmd::checkpoint::checksum(bytes); }

TEST(MappedRead, ALargeChunkReadsTheFilesBytesAndTheirChecksum) {
  const TempFile file((size_t{3} << 20) + 12345);  // mapped (≥ 1 MiB), pieces and a partial one
  std::vector<char> out(file.bytes.size());
  const std::string sum = spmd::checkpoint::read_file_into(file.path, out);
  EXPECT_EQ(out, file.bytes);
  EXPECT_EQ(sum, xxh3_text(file.bytes));
  std::vector<char> wrong(file.bytes.size() + 1);
  EXPECT_THROW(spmd::checkpoint::read_file_into(file.path, wrong), spmd::Error);
}

TEST(MappedRead, AFileTruncatedUnderTheMappingIsReportedAndTheProcessLivesOn) {
  const size_t n = size_t{2} << 20;
  const TempFile file(n);
  const Mapping map(file.path, n);
  ASSERT_EQ(::truncate(file.path.c_str(), 4096), 0);  // pages past 4 KiB now raise SIGBUS
  std::vector<std::byte> out(n);
  XXH3_state_t* hash = XXH3_createState();
  XXH3_64bits_reset(hash);
  EXPECT_FALSE(copy_mapped(map.at, out.data(), n, hash));
  // The guard is ready for the next copy: a whole file copies.
  const TempFile whole(n);
  const Mapping good(whole.path, n);
  XXH3_64bits_reset(hash);
  EXPECT_TRUE(copy_mapped(good.at, out.data(), n, hash));
  EXPECT_EQ(std::memcmp(out.data(), whole.bytes.data(), n), 0);
  EXPECT_EQ(XXH3_64bits_digest(hash), XXH3_64bits(whole.bytes.data(), n));
  XXH3_freeState(hash);
}

sigjmp_buf g_test_resume;
volatile sig_atomic_t g_test_handler_ran = 0;

void test_handler(int /*sig*/) {
  g_test_handler_ran = 1;
  siglongjmp(g_test_resume, 1);
}

TEST(MappedRead, ASigbusOutsideACopyStillReachesTheHandlerInstalledBefore) {
  struct sigaction mine {};
  mine.sa_handler = test_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(::sigaction(SIGBUS, &mine, nullptr), 0);
  const size_t n = size_t{1} << 20;
  const TempFile file(n);
  {
    const Mapping map(file.path, n);
    std::vector<std::byte> out(n);
    XXH3_state_t* hash = XXH3_createState();
    XXH3_64bits_reset(hash);
    ASSERT_TRUE(copy_mapped(map.at, out.data(), n, hash));  // installs the guard over ours
    XXH3_freeState(hash);
  }
  const Mapping map(file.path, n);
  ASSERT_EQ(::truncate(file.path.c_str(), 0), 0);
  if (sigsetjmp(g_test_resume, 1) == 0) {
    const volatile std::byte* p = map.at + n / 2;
    (void)*p;  // SIGBUS, outside any copy
    FAIL() << "reading past a truncated file's end raised no SIGBUS";
  }
  EXPECT_EQ(g_test_handler_ran, 1);
}

}  // namespace
