// The matrix product kernel called by 4 threads at once, as the device threads of a jit program
// call it, from the first call of a fresh process: each thread, released together, multiplies
// its own small matrices 50 times (plain and transposed) and compares with plain loops. Prints
// "ok", or "WRONG" and exits 1. concurrent_matmul_test.cc runs it many times: Debian's sequential
// OpenBLAS called from several threads at once handed two of them one work buffer, and about one
// process in twelve got a wrong product (kernels/matmul.cc serialises the calls now).
#include <barrier>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "kernels/matmul.h"

namespace {

constexpr int kThreads = 4, kRepeats = 50;
constexpr int64_t kM = 4, kK = 3, kN = 2;

// Whether thread `t`'s products were all right.
bool multiply(int t, std::barrier<>& start) {
  std::vector<double> a(kM * kK), b(kK * kN), c(kM * kN), want(kM * kN, 0.0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(t * 3.1 + static_cast<double>(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(t * 1.7 + static_cast<double>(i));
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      for (int64_t k = 0; k < kK; ++k) want[i * kN + j] += a[i * kK + k] * b[k * kN + j];
    }
  }
  auto bytes = [](auto& v) { return reinterpret_cast<std::byte*>(v.data()); };
  std::vector<double> scratch(kK * kN);
  bool right = true;
  start.arrive_and_wait();
  for (int r = 0; r < kRepeats; ++r) {
    if (r % 2 == 1) {  // aᵀ-shaped call of another shape, as a backward pass makes
      spmd::kernels::matmul(spmd::DType::kFloat64, {.m = kK, .k = kM, .n = kN, .transpose_a = true},
                            bytes(a), bytes(c), bytes(scratch));
      continue;
    }
    spmd::kernels::matmul(spmd::DType::kFloat64, {.m = kM, .k = kK, .n = kN}, bytes(a), bytes(b),
                          bytes(c));
    for (size_t i = 0; i < c.size(); ++i) right = right && std::abs(c[i] - want[i]) < 1e-12;
  }
  return right;
}

}  // namespace

int main() {
  std::barrier start(kThreads);
  std::vector<int> right(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { right[t] = multiply(t, start) ? 1 : 0; });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    if (!right[t]) {
      std::printf("WRONG: thread %d's product differs from the plain loops'\n", t);
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}
