#include "spmd-bench/exchange_reference.h"

#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <thread>

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kRing = size_t{1} << 20;
constexpr size_t kPiece = size_t{256} << 10;
constexpr int kMaxCalls = 2000;
constexpr auto kStall = std::chrono::seconds(10);

struct alignas(64) Ring {
  std::atomic<uint64_t> tail{0};              // bytes ever written
  alignas(64) std::atomic<uint64_t> head{0};  // bytes ever read
  alignas(64) std::byte data[kRing];
};

// What the two processes share: a ring each way, per-process call counters (the barrier before
// each call), and process 0's timings.
struct Shared {
  Ring rings[2];
  alignas(64) std::atomic<int> arrived[2];
  double seconds[kMaxCalls];
};

// One process's side: its rotating buffers and its counters into the rings.
struct Side {
  int me;
  Shared* shared;
  std::vector<std::vector<std::byte>> src, dst;
  uint64_t sent = 0, got = 0;
  Clock::time_point progress = Clock::now();

  // Throws nothing: a stall ends the process (the parent reports it).
  void check_stall() {
    if (Clock::now() - progress > kStall) _exit(3);
  }
  void wait_for_peer(int call) {
    shared->arrived[me].store(call + 1, std::memory_order_release);
    progress = Clock::now();
    while (shared->arrived[1 - me].load(std::memory_order_acquire) < call + 1) check_stall();
  }
  // Copies what fits of src[k][done..n) into the outgoing ring; returns the bytes moved.
  size_t send_some(const std::byte* from, size_t left) {
    Ring& out = shared->rings[me];
    const uint64_t room = kRing - (sent - out.head.load(std::memory_order_acquire));
    const size_t k = std::min({left, kPiece, static_cast<size_t>(room), kRing - sent % kRing});
    if (k == 0) return 0;
    std::memcpy(out.data + sent % kRing, from, k);
    sent += k;
    out.tail.store(sent, std::memory_order_release);
    return k;
  }
  size_t receive_some(std::byte* to, size_t left) {
    Ring& in = shared->rings[1 - me];
    const uint64_t ready = in.tail.load(std::memory_order_acquire) - got;
    const size_t k = std::min({left, static_cast<size_t>(ready), kRing - got % kRing});
    if (k == 0) return 0;
    std::memcpy(to, in.data + got % kRing, k);
    got += k;
    in.head.store(got, std::memory_order_release);
    return k;
  }
  void exchange(size_t k, size_t bytes) {
    size_t sent_now = 0, got_now = 0;
    while (sent_now < bytes || got_now < bytes) {
      const size_t s = send_some(src[k].data() + sent_now, bytes - sent_now);
      const size_t r = receive_some(dst[k].data() + got_now, bytes - got_now);
      sent_now += s;
      got_now += r;
      if (s + r > 0) {
        progress = Clock::now();
      } else {
        check_stall();
      }
    }
  }
};

int iterations_for(const SweepOptions& s, size_t bytes) {
  return static_cast<int>(std::clamp<double>(
      s.seconds_per_point / std::max(static_cast<double>(bytes) / 5e9, 1e-7), 5, kMaxCalls));
}

[[noreturn]] void run_side(int me, Shared* shared, size_t bytes, int calls, bool bind) {
  if (bind) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(me, &cpus);
    ::sched_setaffinity(0, sizeof cpus, &cpus);
  }
  const size_t pool = rotating_buffers(bytes);
  Side side{me, shared, {}, {}};
  // Each side sends its own mark, so a received buffer shows whose bytes it holds.
  side.src.assign(pool, std::vector<std::byte>(bytes, std::byte(me + 1)));
  side.dst.assign(pool, std::vector<std::byte>(bytes, std::byte{0}));
  for (int call = 0; call < calls; ++call) {
    side.wait_for_peer(call);
    const auto t0 = Clock::now();
    side.exchange(static_cast<size_t>(call) % pool, bytes);
    if (me == 0) shared->seconds[call] = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  const auto& last = side.dst[static_cast<size_t>(calls - 1) % pool];
  const bool theirs =
      std::all_of(last.begin(), last.end(), [me](std::byte b) { return b == std::byte(2 - me); });
  _exit(theirs ? 0 : 4);
}

// Waits for both children, at most `limit`; kills the ones still running. True when both
// exited 0.
bool reap(const pid_t (&pids)[2], std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

std::optional<ResultRow> exchange_at(const SweepOptions& s, size_t bytes, bool bind) {
  void* mem =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return std::nullopt;
  auto* shared = new (mem) Shared;
  const int calls = iterations_for(s, bytes);
  pid_t pids[2] = {-1, -1};
  for (int me = 0; me < 2; ++me) {
    pids[me] = ::fork();
    if (pids[me] == 0) run_side(me, shared, bytes, calls, bind);
  }
  const bool ok = pids[0] > 0 && pids[1] > 0 && reap(pids, std::chrono::seconds(300));
  std::vector<double> times(shared->seconds, shared->seconds + calls);
  ::munmap(mem, sizeof(Shared));
  if (!ok) {
    fmt::print(stderr, "spmd-bench: the exchange reference at {} bytes failed or stalled\n", bytes);
    return std::nullopt;
  }
  return reference_row("exchange", "shm", 2, bytes, std::move(times));
}

}  // namespace

std::vector<ResultRow> exchange_reference(const SweepOptions& s, bool bind) {
  std::vector<ResultRow> rows;
  for (size_t bytes : s.sizes) {
    if (auto row = exchange_at(s, bytes, bind)) rows.push_back(*row);
  }
  return rows;
}

}  // namespace spmd::bench
