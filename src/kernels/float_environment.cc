#include "kernels/float_environment.h"

#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace spmd::kernels {
namespace {

#if defined(__x86_64__) || defined(__SSE2__)
constexpr uint64_t kFlushBits = 0x8000 | 0x0040;  // MXCSR: FTZ, DAZ
constexpr uint64_t kReadAsZeroBit = 0x0040;       // MXCSR: DAZ
uint64_t read_mode() { return _mm_getcsr(); }
void write_mode(uint64_t mode) { _mm_setcsr(static_cast<unsigned>(mode)); }
#elif defined(__aarch64__)
constexpr uint64_t kFlushBits = uint64_t{1} << 24;  // FPCR.FZ: both directions
constexpr uint64_t kReadAsZeroBit = kFlushBits;
uint64_t read_mode() { return __builtin_aarch64_get_fpcr64(); }
void write_mode(uint64_t mode) { __builtin_aarch64_set_fpcr64(mode); }
#else
constexpr uint64_t kFlushBits = 0;
constexpr uint64_t kReadAsZeroBit = 0;
uint64_t read_mode() { return 0; }
void write_mode(uint64_t) {}
#endif

}  // namespace

FlushSubnormalsScope::FlushSubnormalsScope() : previous_(read_mode()) {
  if ((previous_ & kFlushBits) != kFlushBits) write_mode(previous_ | kFlushBits);
}

FlushSubnormalsScope::~FlushSubnormalsScope() {
  if ((previous_ & kFlushBits) != kFlushBits) write_mode(previous_);
}

uint64_t float_mode() { return read_mode(); }

bool subnormals_read_as_zero() {
  return kReadAsZeroBit != 0 && (read_mode() & kReadAsZeroBit) != 0;
}

FloatModeScope::FloatModeScope(uint64_t mode) : previous_(read_mode()) {
  if (mode != previous_) write_mode(mode);
}

FloatModeScope::~FloatModeScope() {
  if (read_mode() != previous_) write_mode(previous_);
}

}  // namespace spmd::kernels
