// all_reduce for a process: combine the local participants' buffers in memory, reduce across
// processes with the algorithm the size and the memory call for, hand every local participant
// the result.
// float16/bfloat16 go through float32 end to end and are rounded once.
#include <algorithm>
#include <cstring>
#include <vector>

#include "comm/call.h"
#include "comm/reduce_kernels.h"

namespace spmd {

namespace {

// Past the one-shot sizes: through every process's comm memory where the group can, else by
// reduce-scatter and all-gather, within hosts first where the group spans several with
// neighbours. `then`, when not null, is applied by the mapped and the reduce-scatter algorithms to
// this process's share (true returned), not by the hierarchical one (false).
bool reduce_among_processes(Call& c, const std::byte* contrib, std::byte* result,
                            const AllReduceEpilogue* then) {
  const Members all = Members::all(c.layout);
  if (c.bytes() >= kByReferenceMin && maps_every_peer(c, all) &&
      mapped_all_reduce(c, all, contrib, result, then)) {
    return then != nullptr;
  }
  if (spans_hosts_with_neighbours(c.layout)) {
    hierarchical_all_reduce(c, contrib, result);
    return false;
  }
  reduce_scatter_all_gather_all_reduce(c, all, contrib, result, then);
  return then != nullptr;
}

// Several local participants and no other process, in their own dtype: the result is made in
// the first participant's output and copied to the others', one pass over the inputs and one
// copy per other participant (through scratch, two more passes over the buffer). In parts of
// at least kInProcessPart bytes, which the waiting participants take too (local_assist.h), so
// every participant's core works: a data-parallel MLP step's 25 MB of gradients on 1 x 2
// devices went 32 -> 29.4 ms for the passes saved, beside 1 x 1's 25.3. The inputs' elements are
// read before the same elements of the outputs are written, so each output may be its own
// participant's input.
constexpr size_t kInProcessPart = size_t{1} << 20;

// Elements [first, first + n) of an in-process all-reduce with an epilogue, a tile at a time: the
// sum in this thread's tile, the epilogue from it into the first participant's output (which may
// be its input: the tile's inputs are read by then), copied from there to the others' while it
// is in cache. Every participant's output is written once, and the epilogue runs once for all.
void reduce_part_then(const Call& c, const AllReduceEpilogue& then, size_t first, size_t n) {
  const size_t elem = c.elem();
  const size_t per_tile = kEpilogueTile / elem;
  std::byte* tile = epilogue_tiles();
  for (size_t done = 0; done < n; done += per_tile) {
    const size_t k = std::min(per_tile, n - done);
    const size_t at = (first + done) * elem;
    reduce_to(c.dtype, c.fp.reduce, tile, c.local[0].in + at, c.local[1].in + at, k);
    for (size_t i = 2; i < c.local.size(); ++i) {
      reduce_into(c.dtype, c.fp.reduce, tile, c.local[i].in + at, k);
    }
    std::byte* result = c.local[0].out + at;
    then(tile, result, first + done, k);
    for (size_t i = 1; i < c.local.size(); ++i) {
      if (c.local[i].out != c.local[0].out) std::memcpy(c.local[i].out + at, result, k * elem);
    }
  }
}

void all_reduce_in_process(Call& c) {
  const size_t elem = c.elem();
  const size_t count = c.fp.count;
  if (count == 0) return;
  const size_t per_part = std::max<size_t>(1, kInProcessPart / elem);
  const int parts = c.assist != nullptr
                        ? static_cast<int>(std::min<size_t>((count + per_part - 1) / per_part,
                                                            4 * c.local.size()))
                        : 1;
  const size_t step = (count + static_cast<size_t>(parts) - 1) / static_cast<size_t>(parts);
  auto part = [&](int p) {
    const size_t first = static_cast<size_t>(p) * step;
    if (first >= count) return;
    const size_t n = std::min(step, count - first);
    if (const AllReduceEpilogue* then = epilogue_of(c)) return reduce_part_then(c, *then, first, n);
    const size_t at = first * elem;
    std::byte* result = c.local[0].out + at;
    reduce_to(c.dtype, c.fp.reduce, result, c.local[0].in + at, c.local[1].in + at, n);
    for (size_t i = 2; i < c.local.size(); ++i) {
      reduce_into(c.dtype, c.fp.reduce, result, c.local[i].in + at, n);
    }
    for (size_t i = 1; i < c.local.size(); ++i) {
      if (c.local[i].out != c.local[0].out) std::memcpy(c.local[i].out + at, result, n * elem);
    }
  };
  if (parts <= 1) return part(0);
  c.assist->run(parts, part);
}

}  // namespace

void run_all_reduce(Call& c) {
  const size_t count = c.fp.count;
  const bool widen = accumulates_in_float32(c.fp.dtype);
  const size_t bytes = c.bytes();
  const size_t L = c.local.size();

  // This process's contribution.
  const std::byte* contrib = c.local[0].in;
  if (widen) {
    auto* acc = reinterpret_cast<float*>(c.scratch.get(ScratchRole::kWidened, bytes));
    widen_to_float32(c.fp.dtype, c.local[0].in, acc, count);
    for (size_t i = 1; i < L; ++i) {
      reduce_into_float32(c.fp.dtype, c.fp.reduce, acc, c.local[i].in, count);
    }
    contrib = reinterpret_cast<std::byte*>(acc);
  } else if (L > 1 && c.layout.positions() == 1) {
    return all_reduce_in_process(c);
  } else if (L > 1) {
    std::byte* acc = c.scratch.get(ScratchRole::kWidened, bytes);
    reduce_to(c.dtype, c.fp.reduce, acc, c.local[0].in, c.local[1].in, count);
    for (size_t i = 2; i < L; ++i) reduce_into(c.dtype, c.fp.reduce, acc, c.local[i].in, count);
    contrib = acc;
  }

  // The result lands in the first participant's buffer, or, when it must be narrowed, in scratch.
  std::byte* result = widen ? c.scratch.get(ScratchRole::kWidenedResult, bytes) : c.local[0].out;
  bool applied = false;  // the epilogue, by the algorithm among processes
  if (c.layout.positions() == 1) {
    if (result != contrib) std::memcpy(result, contrib, bytes);
  } else if (bytes <= kOneShotAllReduceMax || count < static_cast<size_t>(c.layout.positions())) {
    one_shot_all_reduce(c, Members::all(c.layout), contrib, result);
  } else {
    // A widened call's epilogue reads the rounded values: it runs after the rounding, below.
    applied = reduce_among_processes(c, contrib, result, widen ? nullptr : epilogue_of(c));
  }

  const AllReduceEpilogue* then = applied ? nullptr : epilogue_of(c);
  if (then == nullptr) {
    for (size_t i = 0; i < L; ++i) {
      if (widen) {
        narrow_from_float32(c.fp.dtype, reinterpret_cast<const float*>(result), c.local[i].out,
                            count);
      } else if (c.local[i].out != result) {
        std::memcpy(c.local[i].out, result, bytes);
      }
    }
    return;
  }
  // The epilogue the algorithm did not apply: on the first participant's output (after rounding),
  // copied from there to the others'.
  std::byte* first = c.local[0].out;
  const size_t elem = dtype_size(c.fp.dtype);
  if (widen) {
    narrow_from_float32(c.fp.dtype, reinterpret_cast<const float*>(result), first, count);
  } else if (first != result) {
    std::memcpy(first, result, bytes);
  }
  apply_in_place(*then, first, 0, count, elem);
  for (size_t i = 1; i < L; ++i) {
    if (c.local[i].out != first) std::memcpy(c.local[i].out, first, count * elem);
  }
}

std::byte* epilogue_tiles() {
  thread_local std::vector<double> tiles(2 * kEpilogueTile / sizeof(double));
  return reinterpret_cast<std::byte*>(tiles.data());
}

void apply_in_place(const AllReduceEpilogue& then, std::byte* values, size_t first, size_t count,
                    size_t elem) {
  const size_t per_tile = kEpilogueTile / elem;
  std::byte* tile = epilogue_tiles();
  for (size_t done = 0; done < count; done += per_tile) {
    const size_t k = std::min(per_tile, count - done);
    std::byte* at = values + done * elem;
    then(at, tile, first + done, k);
    std::memcpy(at, tile, k * elem);
  }
}

}  // namespace spmd
