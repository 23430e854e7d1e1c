// Comm memory: host memory for collectives. A collective over buffers in comm memory crosses
// between the processes of one host with one copy per byte instead of two: the receiver maps the
// sender's buffer once and reduces or copies straight out of it, where ordinary memory goes
// through the shared-memory rings (written by the sender, read by the receiver). MPI's
// MPI_Alloc_mem and NCCL's ncclMemAlloc play the same part.
//
//   spmd::CommVector<float> grads(n);   // a std::vector in comm memory
//   world.all_reduce(grads);            // one copy per byte between processes of a host
//
// What it is: each buffer of 256 KiB or more is a memfd(2) of its own, mapped shared and kept
// open, which same-host processes of the job take with pidfd_getfd(2) — allowed where they may
// ptrace one another, as process_vm_readv(2) is; the processes of a group agree on it when the
// group is made, and SPMD_SHM_MAP_BUFFERS=0 turns it off. Smaller buffers, and buffers beyond
// the budget of open descriptors (a quarter of RLIMIT_NOFILE's soft limit, at most 16384), are
// ordinary memory: collectives over them work as over any memory, through the rings.
//
// What it costs: pages of 4 KiB (shared memory gets no transparent huge pages under most
// distributions' default, shmem_enabled=never), so first touch of a fresh buffer costs about ten
// times that of ordinary large buffers; reuse buffers, as a training loop does. Memory shared
// with processes forked from this one, as any MAP_SHARED memory is.
//
// An all-reduce of 256 KiB or more whose input and output are comm memory in every process of a
// one-host group writes results straight into peers' outputs: each process reduces its block out
// of every input and stores it into every output (least traffic: each byte read once and written
// once). Where some process's buffers are not, every process falls back to the one-copy path.
//
// Safety: freeing a buffer gives its pages back at once even while a peer still maps it, and a
// peer still reading or writing a buffer freed under a failed collective gets an error naming
// this process, not a crash (spmd installs a SIGBUS handler for that, chaining to any installed
// before). The output of a failed collective is undefined, and a peer may still be writing its
// block of a failed all-reduce into it for as long as that takes (milliseconds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace spmd {

// `bytes` of comm memory (uninitialised; page-aligned from 256 KiB on). Throws std::bad_alloc.
// Thread-safe.
void* allocate_comm_memory(size_t bytes);
// Frees what allocate_comm_memory(bytes) returned. Thread-safe.
void free_comm_memory(void* p, size_t bytes) noexcept;
// Whether [p, p + bytes) lies in memory that same-host peers can map (false for small buffers
// and those beyond the descriptor budget).
bool is_shared_comm_memory(const void* p, size_t bytes);

template <typename T>
struct CommAllocator {
  using value_type = T;
  CommAllocator() = default;
  template <typename U>
  CommAllocator(const CommAllocator<U>&) noexcept {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) { return static_cast<T*>(allocate_comm_memory(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { free_comm_memory(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const CommAllocator<U>&) const noexcept {
    return true;
  }
};

template <typename T>
using CommVector = std::vector<T, CommAllocator<T>>;

// What comm memory did in this process, for checking that a job's collectives take the one-copy
// path: shared buffers held now and their bytes, requests that got ordinary memory instead
// (beyond the descriptor budget, or memfd refused), and payloads (and bytes) this process read
// straight out of a peer's comm memory, or wrote straight into it (an all-reduce whose buffers
// are all comm memory in every process writes its results into every process's output), ever.
struct CommMemoryStats {
  uint64_t shared_buffers = 0;
  uint64_t shared_bytes = 0;
  uint64_t unshared = 0;
  uint64_t payloads_read_from_peers = 0;
  uint64_t bytes_read_from_peers = 0;
  uint64_t payloads_written_to_peers = 0;
  uint64_t bytes_written_to_peers = 0;
};
CommMemoryStats comm_memory_stats();

}  // namespace spmd
