// The entry points through which libspmd's runtime uses this library as the GPU platform's
// plugin (src/runtime/gpu_plugin.h loads it with dlopen and looks these names up). C linkage, so
// the names are plain; no exception crosses them: a failure is a nonzero return and a message.
// The signatures are gpu_plugin.cc's, at ABI version 1.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/gpu_context.h"

namespace {

void write(const std::string& text, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" {

// The version of this set of entry points; the loader refuses another.
int spmd_gpu_plugin_abi() noexcept { return 1; }

// How many GPUs this process sees; when none, why, into `why` (size bytes, NUL-terminated).
int spmd_gpu_visible(char* why, size_t size) noexcept {
  try {
    std::string reason;
    const int n = spmd::kernels::cuda::visible_gpus(&reason);
    if (n == 0) write(reason, why, size);
    return n;
  } catch (const std::exception& e) {
    write(e.what(), why, size);
    return 0;
  }
}

// GPU `ordinal`'s CUDA name into `out`; 0, or nonzero with the error there.
int spmd_gpu_device_name(int ordinal, char* out, size_t size) noexcept {
  try {
    write(spmd::kernels::cuda::GpuContext::get(ordinal).name(), out, size);
    return 0;
  } catch (const std::exception& e) {
    write(e.what(), out, size);
    return 1;
  }
}

// Makes the CUDA backend libspmd's backend for "gpu" (kernels::register_backend), once; 0, or
// nonzero with the error in `why`.
int spmd_gpu_register(char* why, size_t size) noexcept {
  static std::once_flag once;
  static std::string failure;
  try {
    std::call_once(once, [] {
      try {
        spmd::kernels::register_backend(spmd::kernels::cuda::cuda_backend());
      } catch (const std::exception& e) {
        failure = e.what();
      }
    });
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (failure.empty()) return 0;
  write(failure, why, size);
  return 1;
}

}  // extern "C"
