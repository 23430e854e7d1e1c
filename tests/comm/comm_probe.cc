// A program the collectives tests run as real cluster processes under spmdrun. It checks every
// op against a plain reference computed locally (every participant's input is a known function
// of its rank), or provokes one failure, and prints one line per fact. Exit 0 only when every
// check passed; errors print as "error <Class>: <message>".
//
//   comm_probe verify [--large] [--comm-memory [--except-last]]  every op x dtypes x counts, world
//                                and all-devices groups; with --comm-memory every buffer is comm
//                                memory (but the last process's, with --except-last)
//   comm_probe mismatch-{count,large-count,op,dtype,order,root,epilogue}  the last process differs
//   comm_probe kill [--comm-memory]  the last process dies in the middle of an all_reduce
//   comm_probe absent            after one all_reduce together, the last process skips the next
//                                (run with SPMD_COLLECTIVE_TIMEOUT)
//   comm_probe split             world.split by parity, then collectives in the halves
//   comm_probe p2p               send/recv around a ring and permute
//   comm_probe after-shutdown    a communicator used and dropped after shutdown()
#include <signal.h>
#include <spmd/communicator.h>
#include <spmd/spmd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

using spmd::Communicator;
using spmd::ReduceOp;

std::atomic<int> failures{0};
std::atomic<int> checks{0};

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

const char* class_of(const spmd::Error& e) {
  if (dynamic_cast<const spmd::InvalidArgument*>(&e)) return "InvalidArgument";
  if (dynamic_cast<const spmd::DeadlineExceeded*>(&e)) return "DeadlineExceeded";
  if (dynamic_cast<const spmd::PeerFailure*>(&e)) return "PeerFailure";
  if (dynamic_cast<const spmd::CollectiveMismatch*>(&e)) return "CollectiveMismatch";
  if (dynamic_cast<const spmd::FailedPrecondition*>(&e)) return "FailedPrecondition";
  return "Error";
}

// --comm-memory: every buffer in comm memory (spmd/comm_memory.h), so that large payloads between
// processes of a host go by reference out of the sender's buffer.
bool g_comm_memory = false;

// A contiguous buffer of any element type (std::vector<bool> is not contiguous), zero-filled.
template <class T>
struct Buf {
  explicit Buf(size_t n)
      : p(g_comm_memory ? static_cast<T*>(spmd::allocate_comm_memory(n * sizeof(T)))
                        : static_cast<T*>(::operator new(n * sizeof(T)))),
        n(n) {
    std::fill(p, p + n, T{});
  }
  ~Buf() {
    if (g_comm_memory) {
      spmd::free_comm_memory(p, n * sizeof(T));
    } else {
      ::operator delete(p);
    }
  }
  Buf(Buf&& o) noexcept : p(std::exchange(o.p, nullptr)), n(std::exchange(o.n, 0)) {}
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf& operator=(Buf&&) = delete;
  T* begin() { return p; }
  T* end() { return p + n; }
  const T* begin() const { return p; }
  const T* end() const { return p + n; }
  size_t size() const { return n; }
  T& operator[](size_t i) { return p[i]; }
  const T& operator[](size_t i) const { return p[i]; }
  T* p;
  size_t n;
};

// Participant r's element i: small integers, exact in every dtype, some negative.
double value(int r, size_t i) {
  return static_cast<double>((r * 7 + static_cast<int>(i % 97) * 3) % 11 - 3);
}

template <class T>
T to(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v > 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(v));  // wraps like the kernels
  } else if constexpr (std::is_same_v<T, spmd::bfloat16>) {
    return spmd::to_bfloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, spmd::float16>) {
    return spmd::to_float16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
double from(T v) {
  if constexpr (std::is_same_v<T, spmd::float16> || std::is_same_v<T, spmd::bfloat16>) {
    return spmd::to_float(v);
  } else {
    return static_cast<double>(v);
  }
}

template <class T>
T reduce_ref(ReduceOp op, int n, size_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    bool acc = to<bool>(value(0, i));
    for (int r = 1; r < n; ++r) {
      const bool v = to<bool>(value(r, i));
      acc = (op == ReduceOp::kSum || op == ReduceOp::kMax) ? (acc || v) : (acc && v);
    }
    return acc;
  } else if constexpr (std::is_integral_v<T>) {
    T acc = to<T>(value(0, i));
    for (int r = 1; r < n; ++r) {
      const T v = to<T>(value(r, i));
      using U = std::make_unsigned_t<T>;
      switch (op) {
        case ReduceOp::kSum:
          acc = static_cast<T>(static_cast<U>(acc) + static_cast<U>(v));
          break;
        case ReduceOp::kProd:
          acc = static_cast<T>(static_cast<U>(acc) * static_cast<U>(v));
          break;
        case ReduceOp::kMin:
          acc = std::min(acc, v);
          break;
        case ReduceOp::kMax:
          acc = std::max(acc, v);
          break;
      }
    }
    return acc;
  } else {
    double acc = from(to<T>(value(0, i)));
    for (int r = 1; r < n; ++r) {
      const double v = from(to<T>(value(r, i)));
      switch (op) {
        case ReduceOp::kSum:
          acc += v;
          break;
        case ReduceOp::kProd:
          acc *= v;
          break;
        case ReduceOp::kMin:
          acc = std::min(acc, v);
          break;
        case ReduceOp::kMax:
          acc = std::max(acc, v);
          break;
      }
    }
    return to<T>(acc);
  }
}

template <class T>
bool same(T a, T b) {
  if constexpr (std::is_same_v<T, spmd::float16> || std::is_same_v<T, spmd::bfloat16>) {
    return spmd::to_float(a) == spmd::to_float(b);
  } else {
    return a == b;
  }
}

template <class T>
void expect(const Buf<T>& got, const std::function<T(size_t)>& want, const std::string& what) {
  ++checks;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same(got[i], want(i))) {
      ++failures;
      say("FAIL " + what + " at " + std::to_string(i) + ": got " + std::to_string(from(got[i])) +
          " want " + std::to_string(from(want(i))));
      return;
    }
  }
}

template <class T>
Buf<T> input(int r, size_t n, size_t salt = 0) {
  Buf<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = to<T>(value(r, i + salt));
  return v;
}

// all_reduce_then with the epilogue out = 2 * sum + w, w the same on every participant, out of
// place and in place: every element must come out with the epilogue applied, and no element may
// pass through this participant's epilogue twice (the engine runs one participant's epilogue per
// range of a process's share).
template <class T>
void all_reduce_then(Communicator& c, size_t count, const std::string& where) {
  // Signed and floating types: an unsigned one's wrapped values would leave int64's range here.
  if constexpr (!std::is_same_v<T, bool> && !std::is_unsigned_v<T>) {
    const int n = c.size();
    const Buf<T> w = input<T>(1000, count);
    std::vector<int> seen(count, 0);
    const spmd::AllReduceEpilogue then = [&](const std::byte* sum, std::byte* out, size_t first,
                                             size_t k) {
      const auto* s = reinterpret_cast<const T*>(sum);
      auto* o = reinterpret_cast<T*>(out);
      for (size_t i = 0; i < k; ++i) {
        o[i] = to<T>(2 * from(s[i]) + from(w[first + i]));
        ++seen[first + i];
      }
    };
    const auto want = [&](size_t i) {
      return to<T>(2 * from(reduce_ref<T>(ReduceOp::kSum, n, i)) + from(w[i]));
    };
    const auto twice = [&] {
      return std::count_if(seen.begin(), seen.end(), [](int v) { return v > 1; });
    };
    Buf<T> in = input<T>(c.rank(), count);
    Buf<T> out(count);
    c.all_reduce_then(spmd::dtype_of<T>(), in.p, out.p, count, ReduceOp::kSum, then);
    expect<T>(out, want, where + " all_reduce_then");
    if (twice() != 0) {
      ++failures;
      say("FAIL " + where + " all_reduce_then: an element passed through the epilogue twice");
    }
    std::fill(seen.begin(), seen.end(), 0);
    c.all_reduce_then(spmd::dtype_of<T>(), in.p, in.p, count, ReduceOp::kSum, then);
    expect<T>(in, want, where + " all_reduce_then in place");
  }
}

// Every op on one participant's handle, for dtype T and `count` elements per participant.
template <class T>
void every_op(Communicator& c, size_t count, const std::string& tag) {
  const int n = c.size();
  const int r = c.rank();
  const std::string where = tag + " " + std::string(spmd::dtype_name(spmd::dtype_of<T>())) + " x" +
                            std::to_string(count) + " rank " + std::to_string(r);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax}) {
    if (op == ReduceOp::kProd && count > 1000 && !std::is_integral_v<T>) continue;
    Buf<T> in = input<T>(r, count);
    Buf<T> out(count);
    c.all_reduce(in, out, op);
    const std::string name = where + " all_reduce " + std::string(spmd::reduce_op_name(op));
    expect<T>(
        out, [&](size_t i) { return reduce_ref<T>(op, n, i); }, name);
    c.all_reduce(in, op);  // in place
    expect<T>(
        in, [&](size_t i) { return reduce_ref<T>(op, n, i); }, name + " in place");
  }
  all_reduce_then<T>(c, count, where);
  {
    Buf<T> in = input<T>(r, count);
    Buf<T> out(count * n);
    c.all_gather(in, out);
    expect<T>(
        out, [&](size_t i) { return to<T>(value(static_cast<int>(i / count), i % count)); },
        where + " all_gather");
  }
  {
    // Participant r's input block b is value(r, b*count + i); block r reduced comes back.
    Buf<T> in = input<T>(r, count * n);
    Buf<T> out(count);
    c.reduce_scatter(in, out, ReduceOp::kSum);
    expect<T>(
        out, [&](size_t i) { return reduce_ref<T>(ReduceOp::kSum, n, r * count + i); },
        where + " reduce_scatter");
  }
  {
    // Block j of r's input holds value(r*n + j, i): participant j gets it as its block r.
    Buf<T> in(count * n);
    for (int j = 0; j < n; ++j) {
      for (size_t i = 0; i < count; ++i) in[j * count + i] = to<T>(value(r * n + j, i));
    }
    Buf<T> out(count * n);
    c.all_to_all(in, out);
    expect<T>(
        out, [&](size_t k) { return to<T>(value(static_cast<int>(k / count) * n + r, k % count)); },
        where + " all_to_all");
    c.all_to_all(in, in);  // in place
    expect<T>(
        in, [&](size_t k) { return to<T>(value(static_cast<int>(k / count) * n + r, k % count)); },
        where + " all_to_all in place");
  }
  {
    const int root = n - 1;
    Buf<T> buf = input<T>(r == root ? 1000 : r, count);
    c.broadcast(buf, root);
    expect<T>(
        buf, [&](size_t i) { return to<T>(value(1000, i)); }, where + " broadcast");
  }
  {
    // A shift by one: r sends to r+1; rank 0 gets nothing (zeros) unless the ring closes.
    std::vector<std::pair<int, int>> pairs;
    for (int s = 0; s + 1 < n; ++s) pairs.emplace_back(s, s + 1);
    Buf<T> in = input<T>(r, count);
    Buf<T> out(count);
    c.permute(in, out, pairs);
    expect<T>(
        out, [&](size_t i) { return r == 0 ? T{} : to<T>(value(r - 1, i)); }, where + " permute");
  }
  c.barrier();
}

template <class T>
void sweep(Communicator& c, const std::vector<size_t>& counts, const std::string& tag) {
  for (size_t count : counts) every_op<T>(c, count, tag);
}

void all_dtypes(Communicator& c, const std::vector<size_t>& counts, const std::string& tag) {
  sweep<float>(c, counts, tag);
  sweep<int32_t>(c, counts, tag);
  sweep<spmd::bfloat16>(c, counts, tag);
  sweep<double>(c, {counts.front()}, tag);
  sweep<int8_t>(c, {counts.front()}, tag);
  sweep<uint64_t>(c, {counts.front()}, tag);
  sweep<spmd::float16>(c, {counts.front()}, tag);
  sweep<bool>(c, {counts.front()}, tag);
}

// Runs `body` on one thread per handle, as several local devices do.
void per_device(std::vector<Communicator>& comms, const std::function<void(Communicator&)>& body) {
  std::vector<std::thread> threads;
  for (auto& c : comms)
    threads.emplace_back([&c, &body] {
      try {
        body(c);
      } catch (const spmd::Error& e) {
        ++failures;
        say(std::string("error ") + class_of(e) + ": " + e.what());
      }
    });
  for (auto& t : threads) t.join();
}

void verify(bool large) {
  std::vector<size_t> counts = {1, 7, 1000};
  if (large) counts.push_back(70001);  // past the one-shot limit: reduce-scatter + all-gather
  Communicator w = spmd::world();
  say("world transport " + w.transport() + " size " + std::to_string(w.size()));
  all_dtypes(w, counts, "world");
  if (large) {
    // Several pipeline chunks of the reduce-scatter + all-gather all-reduce (1 MiB each), with a
    // ragged last one.
    Buf<float> in(700001);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(value(w.rank(), i));
    Buf<float> out(in.size());
    w.all_reduce(in, out);
    expect<float>(
        out, [&](size_t i) { return reduce_ref<float>(ReduceOp::kSum, w.size(), i); },
        "world all_reduce chunked float32 x700001");
  }
  std::vector<int> everyone;
  for (const auto& d : spmd::devices()) everyone.push_back(d.id());
  auto comms = spmd::make_communicators(everyone);
  per_device(comms, [&](Communicator& c) { all_dtypes(c, counts, "devices"); });
  // A group in another rank order: reversed devices.
  std::vector<int> reversed(everyone.rbegin(), everyone.rend());
  auto rev = spmd::make_communicators(reversed);
  per_device(rev, [&](Communicator& c) { sweep<float>(c, {5, 1000}, "reversed"); });
}

void bfloat16_rounding() {
  // Two participants: 1 + 2^-8 is a tie in bfloat16 and rounds to even (1.0); 3 participants:
  // float32 accumulation gives 1 + 2^-7 exactly, which pairwise bfloat16 rounding would lose.
  Communicator w = spmd::world();
  const int n = w.size();
  std::vector<spmd::bfloat16> v = {spmd::to_bfloat16(w.rank() == 0 ? 1.0f : std::ldexp(1.0f, -8))};
  w.all_reduce(v);
  const float want = n == 2 ? 1.0f : 1.0078125f;
  ++checks;
  if (spmd::to_float(v[0]) != want) {
    ++failures;
    say("FAIL bfloat16 rounding: got " + std::to_string(spmd::to_float(v[0])));
  }
}

// "comm memory: R payloads read from peers, W written to peers, B shared buffers held".
void say_comm_memory() {
  const spmd::CommMemoryStats st = spmd::comm_memory_stats();
  say("comm memory: " + std::to_string(st.payloads_read_from_peers) +
      " payloads read from peers, " + std::to_string(st.payloads_written_to_peers) +
      " written to peers, " + std::to_string(st.shared_buffers) + " shared buffers held");
}

void mismatch(const std::string& how) {
  Communicator w = spmd::world();
  const bool odd = w.rank() == w.size() - 1;
  std::vector<float> a(16, 1.0f);
  std::vector<float> b(odd && how == "count" ? 17 : 16, 1.0f);
  // Past the one-shot size: with several hosts this goes through hierarchical all-reduce.
  std::vector<float> large(odd ? 100001 : 100000, 1.0f);
  std::vector<int32_t> ints(16, 1);
  std::vector<float> gathered(16 * static_cast<size_t>(w.size()));
  try {
    w.all_reduce(a);  // agreed
    if (how == "count") w.all_reduce(b);
    if (how == "large-count") w.all_reduce(large);
    if (how == "op") odd ? w.all_gather(a, gathered) : w.all_reduce(a);
    if (how == "dtype") odd ? w.all_reduce(ints) : w.all_reduce(a);
    if (how == "root") w.broadcast(a, odd ? 0 : 1);
    if (how == "epilogue") {
      const spmd::AllReduceEpilogue then = [](const std::byte* sum, std::byte* out, size_t,
                                              size_t k) { std::memcpy(out, sum, k * 4); };
      odd ? w.all_reduce(a)
          : w.all_reduce_then(spmd::DType::kFloat32, a.data(), a.data(), a.size(), ReduceOp::kSum,
                              then);
    }
    if (how == "order") {
      if (odd) {
        w.barrier();
        w.all_reduce(a);
      } else {
        w.all_reduce(a);
        w.barrier();
      }
    }
    say("no error");
  } catch (const spmd::Error& e) {
    say(std::string("error ") + class_of(e) + ": " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "verify";
  bool large = false;
  bool except_last = false;  // --comm-memory everywhere but in the last process
  for (int i = 2; i < argc; ++i) {
    large = large || std::string(argv[i]) == "--large";
    g_comm_memory = g_comm_memory || std::string(argv[i]) == "--comm-memory";
    except_last = except_last || std::string(argv[i]) == "--except-last";
  }
  std::atomic<bool> peer_failed{false};
  spmd::distributed::Options options;
  if (mode == "kill") {
    // Report the failure through the calls instead of exiting.
    options.on_peer_failure = [&](const spmd::distributed::PeerFailureInfo&) {
      peer_failed = true;
    };
  }
  spmd::distributed::initialize(options);
  if (except_last && spmd::process_index() == spmd::process_count() - 1) g_comm_memory = false;
  try {
    if (mode == "verify") {
      verify(large);
      if (spmd::process_count() == 2 || spmd::process_count() == 3) bfloat16_rounding();
      say("checked " + std::to_string(checks.load()) + " failures " +
          std::to_string(failures.load()));
      say_comm_memory();
    } else if (mode.rfind("mismatch-", 0) == 0) {
      mismatch(mode.substr(9));
    } else if (mode == "kill") {
      Communicator w = spmd::world();
      Buf<float> big(1 << 20);  // comm memory with --comm-memory: the mapped all-reduce
      std::fill(big.begin(), big.end(), 1.0f);
      w.all_reduce(big);
      say_comm_memory();
      if (w.rank() == w.size() - 1) {
        // Once its barrier is done, every other process has finished the all_reduce: over UCX a
        // process's sends may complete while their bytes are still in its own memory, which
        // dies with it.
        w.barrier();
        say("dying");
        ::kill(::getpid(), SIGKILL);
      }
      const auto start = std::chrono::steady_clock::now();
      try {
        w.barrier();
        for (int i = 0; i < 1000; ++i) w.all_reduce(big);
        say("no error");
      } catch (const spmd::Error& e) {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        say(std::string("error ") + class_of(e) + " after " + std::to_string(ms) +
            " ms: " + e.what());
      }
      std::fflush(stdout);
      // Process 0 hosts the coordination service: leaving at once could reach the others before
      // the notice about the dead process does (the runtime's default handler lingers likewise).
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::_Exit(0);
    } else if (mode == "absent") {
      Communicator w = spmd::world();
      std::vector<float> a(8, 1.0f);
      w.all_reduce(a);
      if (w.rank() == w.size() - 1) {
        say("skipping");
        std::this_thread::sleep_for(std::chrono::seconds(5));
      } else {
        try {
          w.all_reduce(a);
          say("no error");
        } catch (const spmd::Error& e) {
          say(std::string("error ") + class_of(e) + ": " + e.what());
        }
        // Process 0 hosts the coordination service: leaving at once would turn the others'
        // timeouts into PeerFailure.
        std::this_thread::sleep_for(std::chrono::seconds(2));
      }
      std::fflush(stdout);
      std::_Exit(0);
    } else if (mode == "split") {
      Communicator w = spmd::world();
      Communicator half = w.split(w.rank() % 2, -w.rank());
      std::vector<int32_t> v = {w.rank()};
      half.all_reduce(v);
      int want = 0;
      for (int r = w.rank() % 2; r < w.size(); r += 2) want += r;
      say("split rank " + std::to_string(half.rank()) + " of " + std::to_string(half.size()) +
          " sum " + std::to_string(v[0]) + (v[0] == want ? " ok" : " WRONG"));
      if (v[0] != want) ++failures;
    } else if (mode == "after-shutdown") {
      // A handle kept past shutdown(): calls fail clearly, and dropping it later is harmless.
      Communicator w = spmd::world();
      std::vector<float> a(4, 1.0f);
      w.all_reduce(a);
      spmd::distributed::shutdown();
      try {
        w.all_reduce(a);
        say("no error");
      } catch (const spmd::Error& e) {
        say(std::string("error ") + class_of(e) + ": " + e.what());
      }
      return 0;  // `w` goes after the runtime did
    } else if (mode == "local-p2p-split") {
      // Every device a rank; ranks 2k and 2k+1 share a process (two devices each) and trade
      // tokens through the group's in-memory mailbox; a split with one colour has local peers
      // that take the group the lowest of them made.
      std::vector<int> ids(static_cast<size_t>(spmd::device_count()));
      std::iota(ids.begin(), ids.end(), 0);
      std::vector<Communicator> comms = spmd::make_communicators(ids);
      std::vector<std::thread> threads;
      for (Communicator& c : comms) {
        threads.emplace_back([&c] {
          const int n = c.size();
          const int r = c.rank();
          const int partner = r ^ 1;
          std::vector<int64_t> token = {int64_t{r} * 10};
          std::vector<int64_t> got(1);
          if (r % 2 == 0) {
            c.send(token, partner);
            c.recv(got, partner);
          } else {
            c.recv(got, partner);
            c.send(token, partner);
          }
          Communicator all = c.split(0, r);
          std::vector<int32_t> v = {r};
          all.all_reduce(v);
          const bool ok = got[0] == int64_t{partner} * 10 && v[0] == n * (n - 1) / 2 &&
                          all.rank() == r && all.size() == n;
          if (!ok) ++failures;
          say("local p2p rank " + std::to_string(r) + " got " + std::to_string(got[0]) +
              ", split sum " + std::to_string(v[0]) + (ok ? " ok" : " WRONG"));
        });
      }
      for (auto& t : threads) t.join();
    } else if (mode == "crossed-sends") {
      // Both processes send 16 MiB to the other before receiving: neither send can complete.
      Communicator w = spmd::world();
      const int peer = 1 - w.rank();
      std::vector<float> out(size_t{4} << 20, 1.0f), in(size_t{4} << 20);
      try {
        w.send(out, peer);
        w.recv(in, peer);
        say("crossed sends completed");
      } catch (const spmd::DeadlineExceeded& e) {
        say(std::string("ok crossed sends: ") + e.what());
      }
    } else if (mode == "p2p") {
      Communicator w = spmd::world();
      const int n = w.size();
      const int r = w.rank();
      std::vector<int64_t> token = {int64_t{r} * 10};
      std::vector<int64_t> got(1);
      if (r % 2 == 0) {
        w.send(token, (r + 1) % n);
        w.recv(got, (r + n - 1) % n);
      } else {
        w.recv(got, (r + n - 1) % n);
        w.send(token, (r + 1) % n);
      }
      const bool ok = got[0] == int64_t{(r + n - 1) % n} * 10;
      if (!ok) ++failures;
      say("p2p got " + std::to_string(got[0]) + (ok ? " ok" : " WRONG"));
    }
  } catch (const spmd::Error& e) {
    say(std::string("error ") + class_of(e) + ": " + e.what());
    return 1;
  }
  spmd::distributed::shutdown();
  return failures.load() == 0 ? 0 : 1;
}
