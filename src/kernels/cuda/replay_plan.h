// The bookkeeping of replaying a jit call's GPU work as one CUDA graph (call_graph.h), apart from
// CUDA so that it is tested on the CPU (tests/kernels/cuda_replay_plan_test.cc).
//
// A captured call takes all of its device memory from one arena: a block made before the
// capture, handed out front to back (BumpArena) and never freed piece by piece, because memory
// allocated inside a capture would belong to the graph, and a graph whose memory outlives it
// (the call's outputs) cannot be launched again. ReplayPolicy decides what each call of one
// program on one GPU does: the first runs directly and counts the bytes it allocates; later
// calls are captured into an arena of that size; a capture that runs out of arena gives the next
// a larger one, and a program that cannot be captured (a host fallback that waits for the GPU,
// a copy from host memory) or that needs too much memory runs directly from then on.
// Not thread-safe: the owner locks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace spmd::kernels::cuda {

// Hands out [base, base + capacity) front to back in pieces aligned to kAlign bytes.
class BumpArena {
 public:
  static constexpr size_t kAlign = 256;  // cudaMallocAsync's own alignment

  BumpArena(std::byte* base, size_t capacity) : base_(base), capacity_(capacity) {}

  // The next `bytes` (rounded up to kAlign), or null when they do not fit or `bytes` is 0. Every
  // call counts its rounded size in asked(), whether it fitted or not.
  std::byte* take(size_t bytes);
  // Whether `p` points into the arena.
  bool holds(const void* p) const;
  // Hands the whole arena out again from its start.
  void reset() { used_ = asked_ = 0; }

  size_t used() const { return used_; }
  size_t asked() const { return asked_; }
  size_t capacity() const { return capacity_; }

  // `bytes` rounded up to kAlign.
  static size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

 private:
  std::byte* base_;
  size_t capacity_;
  size_t used_ = 0;
  size_t asked_ = 0;
};

class ReplayPolicy {
 public:
  enum class Mode {
    kMeasure,  // run directly, counting the bytes allocated
    kCapture,  // capture into an arena of arena_bytes()
    kDirect,   // run directly from now on
  };
  // Captures that ran out of arena before the program runs directly for good.
  static constexpr int kMostOverflows = 2;

  // `most_bytes`: the largest arena a capture may take (0: never capture).
  explicit ReplayPolicy(size_t most_bytes) : most_bytes_(most_bytes) {
    if (most_bytes == 0) mode_ = Mode::kDirect;
  }

  Mode mode() const { return mode_; }
  // The arena the next capture takes: what was measured, with an eighth more.
  size_t arena_bytes() const { return arena_bytes_; }

  // A kMeasure call allocated `asked` bytes (each rounded as BumpArena rounds them).
  void measured(size_t asked);
  // A capture asked for `asked` bytes before its arena had no room (it stopped there, so it
  // may want more): the next gets twice the larger of that and the arena, within the largest,
  // unless this has happened kMostOverflows times.
  void overflowed(size_t asked);
  // A capture failed for another reason (not capturable): direct from now on.
  void failed() { mode_ = Mode::kDirect; }

 private:
  void size_for(size_t asked);

  size_t most_bytes_;
  Mode mode_ = Mode::kMeasure;
  size_t arena_bytes_ = 0;
  int overflows_ = 0;
};

// The graphs instantiated for one program on one GPU, each known by the input buffers it was
// captured with (its key): a call whose inputs are one graph's replays it without capturing. A
// training loop's inputs are the last step's outputs, whose buffers come back in turn from the
// memory pool, so a few graphs cover them. At most kSlots; a new key takes an empty slot, else
// the one used longest ago.
class GraphSlots {
 public:
  static constexpr int kSlots = 4;

  // The slot whose key is `key`, or -1 (an empty key never matches).
  int find(std::span<const void* const> key) const;
  // The slot a new key goes to.
  int victim() const;
  // Slot `slot` now holds `key`, used now.
  void set(int slot, std::span<const void* const> key);
  // Slot `slot` used now.
  void touch(int slot) { used_[static_cast<size_t>(slot)] = ++clock_; }
  // Slot `slot` empty.
  void forget(int slot) {
    keys_[static_cast<size_t>(slot)].clear();
    used_[static_cast<size_t>(slot)] = 0;
  }
  // Every slot empty.
  void clear();
  bool empty(int slot) const { return used_[static_cast<size_t>(slot)] == 0; }

 private:
  std::array<std::vector<const void*>, kSlots> keys_;
  std::array<uint64_t, kSlots> used_{};  // 0: empty
  uint64_t clock_ = 0;
};

}  // namespace spmd::kernels::cuda
