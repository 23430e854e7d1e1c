#include "spmd-bench/collective_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "spmd-bench/result_row.h"

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kFreshFrom = size_t{64} << 10;
constexpr size_t kPoolBytes = 64u << 20;

}  // namespace

size_t rotating_buffers(size_t bytes) {
  return bytes >= kFreshFrom ? std::max<size_t>(1, kPoolBytes / bytes) : 1;
}

namespace {

// nccl-tests' bus bandwidth factors.
double bus_factor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "broadcast") return 1.0;
  return static_cast<double>(n - 1) / n;
}

// Elements per participant for a row of `bytes`.
size_t count_for(const std::string& op, size_t bytes, int n) {
  const size_t elems = bytes / sizeof(float);
  if (op == "all_reduce" || op == "broadcast") return elems;
  return elems / n;
}

size_t in_elems(const std::string& op, size_t count, int n) {
  return (op == "reduce_scatter" || op == "all_to_all") ? count * n : count;
}
size_t out_elems(const std::string& op, size_t count, int n) {
  return (op == "all_gather" || op == "all_to_all") ? count * n : count;
}

float input(int rank, size_t i) { return static_cast<float>(rank + 1 + static_cast<int>(i % 13)); }

// The answer at out[i] for inputs made by input(); broadcast's root is rank 0.
float expected(const std::string& op, int n, int rank, size_t count, size_t i) {
  if (op == "all_reduce") {
    float s = 0;
    for (int r = 0; r < n; ++r) s += input(r, i);
    return s;
  }
  if (op == "reduce_scatter") {
    float s = 0;
    for (int r = 0; r < n; ++r) s += input(r, rank * count + i);
    return s;
  }
  if (op == "all_gather") return input(static_cast<int>(i / count), i % count);
  if (op == "all_to_all") return input(static_cast<int>(i / count), rank * count + i % count);
  return input(0, i);  // broadcast from rank 0
}

// A point's input and output buffers, in the implementation's memory, freed with it.
class Buffers {
 public:
  Buffers(CollectiveImpl& impl, size_t ni, size_t no) : impl_(impl), ni_(ni), no_(no) {}
  ~Buffers() {
    for (float* p : in) impl_.deallocate(p, ni_);
    for (float* p : out) impl_.deallocate(p, no_);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void add() {
    in.push_back(impl_.allocate(ni_));
    out.push_back(impl_.allocate(no_));
  }
  std::vector<float*> in;
  std::vector<float*> out;

 private:
  CollectiveImpl& impl_;
  size_t ni_;
  size_t no_;
};

}  // namespace

std::vector<size_t> default_sizes() {
  std::vector<size_t> s;
  for (size_t b = 8; b <= (256u << 20); b *= 4) s.push_back(b);
  s.push_back(1u << 20);
  s.push_back(64u << 20);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

std::vector<std::string> default_ops() {
  return {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"};
}

std::vector<std::string> parse_list(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::vector<size_t> parse_sizes(const std::string& list) {
  std::vector<size_t> out;
  for (const std::string& item : parse_list(list)) {
    char* end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    const std::string unit = end;
    if (unit == "K" || unit == "KiB")
      v *= 1024;
    else if (unit == "M" || unit == "MiB")
      v *= 1024 * 1024;
    else if (unit == "G" || unit == "GiB")
      v *= 1024.0 * 1024 * 1024;
    else if (!unit.empty() && unit != "B")
      throw std::invalid_argument("bad size: " + item);
    if (v < 4) throw std::invalid_argument("size below one float32: " + item);
    out.push_back(static_cast<size_t>(v));
  }
  return out;
}

namespace {

// `pool` input/output pairs of one point, filled with input() (broadcast's root holds the data
// in `out`, where it runs in place).
void fill_buffers(Buffers& buf, const std::string& op, int rank, size_t ni, size_t no,
                  size_t pool) {
  for (size_t p = 0; p < pool; ++p) {
    buf.add();
    for (size_t i = 0; i < ni; ++i) buf.in.back()[i] = input(rank, i);
    for (size_t i = 0; i < no; ++i) {
      buf.out.back()[i] = op == "broadcast" && rank == 0 ? input(0, i) : 0.0f;
    }
  }
}

// Warms up, then sizes the run from the time per call; every rank runs rank 0's number.
int choose_iterations(CollectiveImpl& impl, const std::string& op, Buffers& buf, size_t pool,
                      size_t count, const SweepOptions& options) {
  impl.barrier();
  const auto t0 = Clock::now();
  for (int i = 0; i < 3; ++i) impl.run(op, buf.in[i % pool], buf.out[i % pool], count);
  const double per_call = std::chrono::duration<double>(Clock::now() - t0).count() / 3;
  int iterations = static_cast<int>(options.seconds_per_point / std::max(per_call, 1e-7));
  iterations = std::clamp(iterations, options.min_iterations, options.max_iterations);
  std::vector<float> mine(1, static_cast<float>(impl.rank() == 0 ? iterations : 0));
  std::vector<float> all(1);
  if (impl.supports("all_reduce")) {
    impl.run("all_reduce", mine.data(), all.data(), 1);
    iterations = static_cast<int>(all[0]);
  }
  return iterations;
}

// One checked call into an output cleared first, so a stale buffer cannot pass; true when
// every rank's output is right.
bool check_point(CollectiveImpl& impl, const std::string& op, Buffers& buf, size_t slot,
                 size_t count, size_t no) {
  const int rank = impl.rank();
  float* out = buf.out[slot];
  if (op != "broadcast" || rank != 0) std::fill(out, out + no, 0.0f);
  impl.run(op, buf.in[slot], out, count);
  bool ok = true;
  for (size_t i = 0; i < no && ok; ++i) ok = out[i] == expected(op, impl.size(), rank, count, i);
  return impl.all_true(ok);
}

void print_point(CollectiveImpl& impl, const std::string& op, size_t bytes,
                 std::vector<double> times, bool ok, bool fresh) {
  std::sort(times.begin(), times.end());
  const double p50 = times[times.size() / 2];
  const double algbw = static_cast<double>(bytes) / p50 / 1e9;
  ResultRow row;
  row.op = op;
  row.impl = impl.name();
  row.transport = impl.transport();
  row.processes = impl.size();
  row.bytes = bytes;
  row.p50_us = p50 * 1e6;
  row.p99_us = times[std::min(times.size() - 1, times.size() * 99 / 100)] * 1e6;
  row.algbw_GBps = algbw;
  row.busbw_GBps = algbw * bus_factor(op, impl.size());
  row.correct = ok;
  row.iterations = static_cast<int>(times.size());
  row.fresh_buffers = fresh;
  std::printf("%s\n", to_json_line(row).c_str());
  std::fflush(stdout);
}

}  // namespace

void sweep(CollectiveImpl& impl, const SweepOptions& options) {
  const int n = impl.size();
  for (const std::string& op : options.ops) {
    if (!impl.supports(op)) continue;
    for (size_t bytes : options.sizes) {
      const size_t count = count_for(op, bytes, n);
      if (count == 0) continue;
      const size_t ni = in_elems(op, count, n);
      const size_t no = out_elems(op, count, n);
      const size_t big = std::max(ni, no) * sizeof(float);
      const size_t pool = rotating_buffers(big);
      Buffers buf(impl, ni, no);
      fill_buffers(buf, op, impl.rank(), ni, no, pool);
      const int iterations = choose_iterations(impl, op, buf, pool, count, options);
      std::vector<double> times(iterations);
      impl.barrier();
      size_t last = 0;
      for (int i = 0; i < iterations; ++i) {
        last = static_cast<size_t>(i) % pool;
        const auto s = Clock::now();
        impl.run(op, buf.in[last], buf.out[last], count);
        times[i] = std::chrono::duration<double>(Clock::now() - s).count();
      }
      const bool ok = check_point(impl, op, buf, last, count, no);
      if (impl.rank() == 0) print_point(impl, op, bytes, std::move(times), ok, pool > 1);
    }
  }
}

}  // namespace spmd::bench
