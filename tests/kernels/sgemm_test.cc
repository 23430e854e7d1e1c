// kernels::sgemm (kernels/sgemm.h): oneDNN's and OpenBLAS's float32 products, each against a
// float64 reference, over transposes, leading dimensions and odd shapes; c only written (NaN in it
// beforehand changes nothing), an empty contraction zeros; SPMD_CPU_SGEMM's settings, a bad one
// refused naming the variable; the caller's OpenMP thread count untouched; and device threads
// multiplying at once, thousands of products, each checked (Debian's sequential OpenBLAS once
// handed two threads one buffer: kernels/matmul.cc). oneDNN's cases skip, saying why, where it
// cannot be loaded (the Makefile installs it: libdnnl2).
#include "kernels/sgemm.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/blas_core.h"
#include "spmd/error.h"

namespace {

namespace k = spmd::kernels;

struct Case {
  int64_t m, n, k;
  bool ta, tb;
  int64_t pad;  // extra elements per row of every operand: leading dimensions past the width
};

struct Operands {
  std::vector<float> a, b;
  int64_t lda, ldb, ldc;
};

Operands operands(const Case& c, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  Operands o;
  o.lda = (c.ta ? c.m : c.k) + c.pad;
  o.ldb = (c.tb ? c.k : c.n) + c.pad;
  o.ldc = c.n + c.pad;
  o.a.resize(static_cast<size_t>((c.ta ? c.k : c.m) * o.lda));
  o.b.resize(static_cast<size_t>((c.tb ? c.n : c.k) * o.ldb));
  for (float& v : o.a) v = value(gen);
  for (float& v : o.b) v = value(gen);
  return o;
}

// The largest |c - reference| over the m × n result, and |a|·|b| for the bound; c's padding must
// still hold `fill` (nothing written past the row).
void expect_product(const Case& c, const Operands& o, const std::vector<float>& out,
                    const std::string& what) {
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double want = 0, scale = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = o.a[static_cast<size_t>(c.ta ? p * o.lda + i : i * o.lda + p)];
        const double y = o.b[static_cast<size_t>(c.tb ? j * o.ldb + p : p * o.ldb + j)];
        want += x * y;
        scale += std::abs(x * y);
      }
      const double got = out[static_cast<size_t>(i * o.ldc + j)];
      // Higham's bound for a float32 dot product of length k, with room for blocked orders.
      const double bound = 2.0 * static_cast<double>(c.k + 2) * 0x1p-24 * scale + 1e-30;
      ASSERT_LE(std::abs(got - want), bound) << what << ": c[" << i << "][" << j << "]";
    }
  }
}

std::vector<k::SgemmLibrary> libraries() {
  std::vector<k::SgemmLibrary> all = {k::SgemmLibrary::kOpenBlas};
  if (k::onednn_loads()) all.push_back(k::SgemmLibrary::kOneDnn);
  return all;
}

std::string name(k::SgemmLibrary library) { return std::string(k::sgemm_library_name(library)); }

TEST(Sgemm, OneDnnLoadsWhereInstalledAndServesFloat32ByDefault) {
  std::string why;
  if (!k::onednn_loads(&why)) {
    GTEST_SKIP() << "oneDNN cannot be loaded here (" << why << "): OpenBLAS computes float32";
  }
  EXPECT_EQ(k::sgemm_library_for(nullptr), k::SgemmLibrary::kOneDnn);
  EXPECT_EQ(k::sgemm_library_for(""), k::SgemmLibrary::kOneDnn);
  EXPECT_EQ(k::sgemm_library_for("onednn"), k::SgemmLibrary::kOneDnn);
}

// A large product goes to OpenBLAS where oneDNN was not chosen by hand and the processor lacks
// AVX-512 (sgemm.h says why), whatever its transposes; a small one, or any with AVX-512, stays on
// the process's library.
TEST(Sgemm, ALargeProductWithoutAvx512GoesToOpenBlas) {
  const auto one_dnn = k::SgemmLibrary::kOneDnn, open_blas = k::SgemmLibrary::kOpenBlas;
  const auto pick = [&](k::SgemmLibrary process, bool by_hand, bool avx512, int64_t m) {
    return k::product_library(process, by_hand, avx512, m, 256, 2048);
  };
  EXPECT_EQ(pick(one_dnn, false, false, 512), open_blas);
  EXPECT_EQ(pick(one_dnn, false, false, 32), open_blas);  // 32 x 256 x 2048 = 2^24: large
  EXPECT_EQ(pick(one_dnn, false, false, 31), one_dnn);    // just below: small
  EXPECT_EQ(pick(one_dnn, false, false, 8), one_dnn);     // 8 x 256 x 2048: small
  EXPECT_EQ(pick(one_dnn, false, true, 512), one_dnn);    // AVX-512
  EXPECT_EQ(pick(one_dnn, true, false, 512), one_dnn);    // SPMD_CPU_SGEMM=onednn
  EXPECT_EQ(pick(open_blas, false, true, 512), open_blas);
  EXPECT_EQ(pick(open_blas, false, false, 8), open_blas);
  // Dimensions at int's edge: m·n·k passes int64_t's range, and is still large.
  constexpr int64_t kInt = std::numeric_limits<int>::max();
  EXPECT_EQ(k::product_library(one_dnn, false, false, kInt, kInt, kInt), open_blas);
}

TEST(Sgemm, TheSettingChoosesAndABadOneIsRefusedNamingTheVariable) {
  EXPECT_EQ(k::sgemm_library_for("openblas"), k::SgemmLibrary::kOpenBlas);
  try {
    k::sgemm_library_for("mkl");
    FAIL() << "SPMD_CPU_SGEMM=mkl was taken";
  } catch (const spmd::InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SPMD_CPU_SGEMM=mkl"), std::string::npos) << what;
    EXPECT_NE(what.find("onednn or openblas"), std::string::npos) << what;
  }
  if (!k::onednn_loads()) {
    EXPECT_THROW(k::sgemm_library_for("onednn"), spmd::InvalidArgument);
  }
}

TEST(Sgemm, EachLibraryMultipliesEveryFormWithinRounding) {
  const std::vector<Case> cases = {
      {1, 1, 1, false, false, 0},      {3, 5, 7, false, false, 0},
      {3, 5, 7, true, false, 2},       {3, 5, 7, false, true, 1},
      {3, 5, 7, true, true, 3},        {64, 48, 33, false, true, 0},
      {129, 257, 65, true, false, 5},  {256, 512, 300, false, false, 0},
      {17, 1000, 129, false, true, 7}, {300, 31, 513, true, true, 0}};
  for (k::SgemmLibrary library : libraries()) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const Operands o = operands(c, static_cast<uint32_t>(i));
      std::vector<float> out(static_cast<size_t>(c.m * o.ldc),
                             std::numeric_limits<float>::quiet_NaN());
      k::sgemm(library, c.ta, c.tb, c.m, c.n, c.k, o.a.data(), o.lda, o.b.data(), o.ldb, out.data(),
               o.ldc);
      expect_product(c, o, out, name(library) + " case " + std::to_string(i));
      for (int64_t r = 0; r < c.m; ++r) {  // the padding is never written
        for (int64_t j = c.n; j < o.ldc; ++j) {
          ASSERT_TRUE(std::isnan(out[static_cast<size_t>(r * o.ldc + j)]))
              << name(library) << " case " << i << " wrote past row " << r;
        }
      }
    }
  }
}

TEST(Sgemm, AnEmptyContractionIsZerosWhateverCHeld) {
  for (k::SgemmLibrary library : libraries()) {
    const std::vector<float> a(1), b(1);
    std::vector<float> c(12, std::numeric_limits<float>::quiet_NaN());
    k::sgemm(library, false, false, 3, 4, 0, a.data(), 1, b.data(), 4, c.data(), 4);
    for (float v : c) ASSERT_EQ(v, 0.0f) << name(library);
  }
}

TEST(Sgemm, TheCallersOpenMpThreadCountIsLeftAsItWas) {
  if (!k::onednn_loads()) GTEST_SKIP() << "oneDNN cannot be loaded here: nothing to hold";
  auto* get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  auto* set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (get == nullptr || set == nullptr) {
    void* dnnl = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (dnnl == nullptr) dnnl = dlopen("libdnnl.so.3", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(dnnl, nullptr);
    get = reinterpret_cast<int (*)()>(dlsym(dnnl, "omp_get_max_threads"));
    set = reinterpret_cast<void (*)(int)>(dlsym(dnnl, "omp_set_num_threads"));
  }
  ASSERT_TRUE(get != nullptr && set != nullptr);
  set(7);
  const Case c{40, 40, 40, false, false, 0};
  const Operands o = operands(c, 3);
  std::vector<float> out(1600);
  k::sgemm(k::SgemmLibrary::kOneDnn, false, false, 40, 40, 40, o.a.data(), o.lda, o.b.data(), o.ldb,
           out.data(), o.ldc);
  EXPECT_EQ(get(), 7);
  expect_product(c, o, out, "after the count was set to 7");
}

// Four threads, each 600 products of shapes of its own, all at once, every product checked.
TEST(Sgemm, ThreadsMultiplyAtOnceAndEveryProductIsRight) {
  for (k::SgemmLibrary library : libraries()) {
    std::atomic<int> wrong = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < 600; ++r) {
          const Case c{8 + 7 * t + r % 5, 16 + 5 * t, 24 + r % 3, (r & 1) != 0, (r & 2) != 0, 0};
          const Operands o = operands(c, static_cast<uint32_t>(1000 * t + r));
          std::vector<float> out(static_cast<size_t>(c.m * o.ldc));
          k::sgemm(library, c.ta, c.tb, c.m, c.n, c.k, o.a.data(), o.lda, o.b.data(), o.ldb,
                   out.data(), o.ldc);
          for (int64_t i = 0; i < c.m; ++i) {
            for (int64_t j = 0; j < c.n; ++j) {
              double want = 0;
              for (int64_t p = 0; p < c.k; ++p) {
                want += double(o.a[size_t(c.ta ? p * o.lda + i : i * o.lda + p)]) *
                        o.b[size_t(c.tb ? j * o.ldb + p : p * o.ldb + j)];
              }
              if (std::abs(out[size_t(i * o.ldc + j)] - want) > 1e-4) ++wrong;
            }
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0) << name(library);
  }
}

}  // namespace
