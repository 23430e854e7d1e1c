// Comm memory's shared buffers (comm/shared_buffers.h, spmd/comm_memory.h) and a peer's mappings
// of them (comm/peer_mappings.h), between this process and a real child process.
#include "comm/shared_buffers.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/peer_mappings.h"
#include "runtime/bus_error_guard.h"
#include "spmd/comm_memory.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;

TEST(SharedBuffers, ARangeInsideABufferIsFoundWithItsOffsetAndOneCrossingItsEndIsNot) {
  constexpr size_t kBytes = size_t{1} << 20;
  auto* p = static_cast<std::byte*>(allocate_shared_buffer(kBytes));
  ASSERT_NE(p, nullptr);
  const auto span = find_shared(p + 4096, kBytes - 4096);
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->offset, 4096u);
  EXPECT_EQ(span->size, kBytes);
  EXPECT_GE(span->fd, 0);
  EXPECT_FALSE(find_shared(p + 4096, kBytes).has_value());
  EXPECT_TRUE(free_shared_buffer(p));
  EXPECT_FALSE(find_shared(p, 1).has_value());
  int local = 0;
  EXPECT_FALSE(free_shared_buffer(&local));
}

TEST(SharedBuffers, FreeingTruncatesTheFileSoAnotherMappingHoldsNoPages) {
  auto* p = static_cast<std::byte*>(allocate_shared_buffer(size_t{1} << 20));
  ASSERT_NE(p, nullptr);
  std::memset(p, 7, size_t{1} << 20);
  const int copy = ::dup(find_shared(p, 1)->fd);
  ASSERT_GE(copy, 0);
  ASSERT_TRUE(free_shared_buffer(p));
  struct stat st {};
  ASSERT_EQ(::fstat(copy, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_blocks, 0);
  ::close(copy);
}

TEST(CommMemory, LargeBuffersAreSharedAndSmallOnesAreOrdinary) {
  const CommMemoryStats before = comm_memory_stats();
  void* big = allocate_comm_memory(kSharedBufferMin);
  void* small = allocate_comm_memory(kSharedBufferMin - 1);
  EXPECT_TRUE(is_shared_comm_memory(big, kSharedBufferMin));
  EXPECT_FALSE(is_shared_comm_memory(small, 1));
  EXPECT_EQ(comm_memory_stats().shared_buffers, before.shared_buffers + 1);
  free_comm_memory(big, kSharedBufferMin);
  free_comm_memory(small, kSharedBufferMin - 1);
  EXPECT_EQ(comm_memory_stats().shared_buffers, before.shared_buffers);
  CommVector<float> v(1 << 18, 1.5f);
  EXPECT_TRUE(is_shared_comm_memory(v.data(), v.size() * sizeof(float)));
  EXPECT_EQ(v[12345], 1.5f);
}

// Runs `child` in a forked process and returns its exit code (-1 when it did not exit in time).
int in_child(const std::function<int()>& child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  for (auto until = std::chrono::steady_clock::now() + 30s;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(5ms)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

TEST(CommMemory, BeyondTheDescriptorBudgetBuffersAreOrdinaryAndCounted) {
  // A child with a soft limit of 64 descriptors: a budget of 16 shared buffers.
  EXPECT_EQ(in_child([] {
              rlimit limit{};
              ::getrlimit(RLIMIT_NOFILE, &limit);
              limit.rlim_cur = 64;
              if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return 10;
              const CommMemoryStats before = comm_memory_stats();
              if (before.shared_buffers != 0) return 13;
              std::vector<void*> held;
              for (int i = 0; i < 20; ++i) held.push_back(allocate_comm_memory(kSharedBufferMin));
              int shared = 0;
              for (void* p : held) shared += is_shared_comm_memory(p, kSharedBufferMin) ? 1 : 0;
              const CommMemoryStats st = comm_memory_stats();
              if (shared != 16 || st.shared_buffers != 16 || st.unshared != before.unshared + 4) {
                return 11;
              }
              for (void* p : held) free_comm_memory(p, kSharedBufferMin);
              return comm_memory_stats().shared_buffers == 0 ? 0 : 12;
            }),
            0);
}

// A child that shares a buffer of kBytes filled with 0x5a and reports its id, fd and pid through
// a pipe; when told (a byte on the second pipe) it reports how many bytes of the buffer are no
// longer 0x5a and frees it, and it exits when told again.
class SharingChild {
 public:
  static constexpr size_t kBytes = size_t{1} << 20;
  SharingChild() {
    EXPECT_EQ(::pipe(report_), 0);
    EXPECT_EQ(::pipe(command_), 0);
    pid_ = ::fork();
    if (pid_ == 0) ::_exit(run());
    ::close(report_[1]);
    ::close(command_[0]);
    EXPECT_EQ(::read(report_[0], &span_, sizeof(span_)), static_cast<ssize_t>(sizeof(span_)));
  }
  ~SharingChild() {
    while (told_ < 2) tell();
    ::waitpid(pid_, nullptr, 0);
    ::close(report_[0]);
    ::close(command_[1]);
  }
  // Frees the buffer (first call: returns how many of its bytes this process changed), then lets
  // the child exit (second call; no more after it: the child is gone).
  uint64_t tell() {
    ++told_;
    const char c = 'x';
    (void)::write(command_[1], &c, 1);
    uint64_t changed = 0;
    (void)::read(report_[0], &changed, told_ == 1 ? sizeof(changed) : 1);
    return changed;
  }
  pid_t pid() const { return pid_; }
  ReferenceBody body(uint64_t offset) const {
    ReferenceBody b;
    b.key = static_cast<uint64_t>(pid_);
    b.buffer = span_.id;
    b.buffer_offset = offset;
    b.buffer_fd = span_.fd;
    return b;
  }

 private:
  int run() {
    void* p = allocate_shared_buffer(kBytes);
    if (p == nullptr) return 1;
    std::memset(p, 0x5a, kBytes);
    const SharedSpan span = *find_shared(p, kBytes);
    (void)::write(report_[1], &span, sizeof(span));
    char c = 0;
    (void)::read(command_[0], &c, 1);
    const auto* bytes = static_cast<const unsigned char*>(p);
    const uint64_t changed =
        kBytes - static_cast<uint64_t>(std::count(bytes, bytes + kBytes, 0x5a));
    free_shared_buffer(p);
    (void)::write(report_[1], &changed, sizeof(changed));
    (void)::read(command_[0], &c, 1);
    (void)::write(report_[1], &c, 1);
    return 0;
  }
  int report_[2] = {-1, -1};
  int command_[2] = {-1, -1};
  pid_t pid_ = -1;
  int told_ = 0;
  SharedSpan span_;
};

TEST(PeerMappings, APayloadInAPeersBufferIsReadWhereItLies) {
  SharingChild child;
  PeerMappings mappings(child.pid(), "the child");
  const std::byte* at = mappings.locate(child.body(4096), 100, 1000);
  for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(at[i], std::byte{0x5a}) << i;
  // The second payload from the same buffer uses the same mapping.
  const uint64_t made = peer_mapping_counts().mappings;
  EXPECT_EQ(mappings.locate(child.body(0), 4196, 1), at);
  EXPECT_EQ(peer_mapping_counts().mappings, made);
}

TEST(PeerMappings, ABodyOutsideTheBufferOrNamingAnotherIsRefused) {
  SharingChild child;
  PeerMappings mappings(child.pid(), "the child");
  EXPECT_THROW(mappings.locate(child.body(SharingChild::kBytes - 8), 0, 16), Error);
  EXPECT_THROW(mappings.locate(child.body(~uint64_t{0}), 8, 8), Error);
  ReferenceBody wrong_id = child.body(0);
  wrong_id.buffer += 1000;  // the descriptor is another buffer's
  EXPECT_THROW(mappings.locate(wrong_id, 0, 8), Error);
  ReferenceBody no_fd = child.body(0);
  no_fd.buffer += 2000;
  no_fd.buffer_fd = 1000;
  EXPECT_THROW(mappings.locate(no_fd, 0, 8), Error);
}

TEST(PeerMappings, ABufferItsOwnerFreedIsAnErrorToReadNotACrash) {
  SharingChild child;
  PeerMappings mappings(child.pid(), "the child");
  const std::byte* at = mappings.locate(child.body(0), 0, SharingChild::kBytes);
  child.tell();  // the child frees the buffer: its file is truncated under this mapping
  std::byte sink{};
  const bool read = catching_bus_errors([&] { sink = at[SharingChild::kBytes / 2]; });
  EXPECT_FALSE(read);
}

TEST(PeerMappings, BytesWrittenIntoAPeersBufferAreWhatThePeerHolds) {
  SharingChild child;
  PeerMappings mappings(child.pid(), "the child");
  const PeerMappingCounts before = peer_mapping_counts();
  std::byte* at = mappings.reach(child.body(4096), 64, 1000, PeerAccess::kWrite);
  std::memset(at, 0x11, 1000);
  const PeerMappingCounts after = peer_mapping_counts();
  EXPECT_EQ(after.written_payloads, before.written_payloads + 1);
  EXPECT_EQ(after.written_bytes, before.written_bytes + 1000);
  EXPECT_EQ(after.payloads, before.payloads);
  EXPECT_THROW(mappings.reach(child.body(SharingChild::kBytes - 8), 0, 16, PeerAccess::kWrite),
               Error);
  EXPECT_EQ(child.tell(), 1000u);
}

TEST(PeerMappings, ABufferItsOwnerFreedIsAnErrorToWriteNotACrash) {
  SharingChild child;
  PeerMappings mappings(child.pid(), "the child");
  std::byte* at = mappings.reach(child.body(0), 0, SharingChild::kBytes, PeerAccess::kWrite);
  EXPECT_EQ(child.tell(), 0u);  // the child frees the buffer: its file is truncated under this
  const bool wrote = catching_bus_errors([&] { at[SharingChild::kBytes / 2] = std::byte{1}; });
  EXPECT_FALSE(wrote);
}

TEST(PeerMappings, TheProbeTellsWhetherAPeersBuffersCanBeMapped) {
  const SharedProbe& probe = shared_probe();
  ASSERT_GE(probe.fd, 0);
  EXPECT_TRUE(PeerMappings::can_map(::getpid(), probe.fd, probe.id, probe.word));
  EXPECT_FALSE(PeerMappings::can_map(::getpid(), probe.fd, probe.id, probe.word + 1));
  EXPECT_FALSE(PeerMappings::can_map(::getpid(), probe.fd, probe.id + 1, probe.word));
}

}  // namespace
}  // namespace spmd
