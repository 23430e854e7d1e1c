// The ordering kernels: scans, binary searches, and top_k through CUB's radix sort.
#include <cmath>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/ordering_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/scalar_order.h"

namespace spmd::kernels::cuda {
namespace {

template <class F>
void visit_orderable(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUInt32:
      return f(uint32_t{});
    case DType::kUInt64:
      return f(uint64_t{});
    case DType::kFloat64:
      return f(double{});
    default:
      return f(float{});
  }
}

template <class T, bool kMultiply>
__global__ void __launch_bounds__(256)
    scan_kernel(const T* in, int64_t outer, int64_t n, int64_t inner, T* out) {
  const int64_t lines = outer * inner;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t line = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; line < lines;
       line += stride) {
    const int64_t base = line / inner * n * inner + line % inner;
    scalar::XlaScan<T, kMultiply> scan(n);
    for (int64_t i = 0; i < n; ++i) out[base + i * inner] = scan.feed(in[base + i * inner]);
  }
}

template <class T>
__global__ void __launch_bounds__(256)
    search_kernel(const T* sorted, int64_t n, int levels, const T* queries, int64_t count,
                  int32_t* out) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = scalar::search_sorted_one(sorted, n, levels, queries[i]);
  }
}

// keys[i] = JAX's sort key of in[i], values[i] = i.
template <class T, class Key>
__global__ void __launch_bounds__(256)
    key_kernel(const T* in, int64_t n, Key* keys, int32_t* values) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = static_cast<Key>(scalar::sort_key(in[i]));
    values[i] = static_cast<int32_t>(i);
  }
}

// Pass one of sort: keys[i] and flat[i] for the element at flat index f, f = i, or f = total - 1 -
// i where `reversed` (a stable sort then puts the later of equal keys first).
template <class T, class Key>
__global__ void __launch_bounds__(256)
    sort_key_kernel(const T* in, int64_t total, bool reversed, Key* keys, int32_t* flat) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t f = reversed ? total - 1 - i : i;
    keys[i] = static_cast<Key>(scalar::sort_key(in[f]));
    flat[i] = static_cast<int32_t>(f);
  }
}

// Pass two's keys: the line of each flat index (lines run along an axis of length n, inner
// elements apart).
__global__ void __launch_bounds__(256)
    line_kernel(const int32_t* flat, int64_t total, int64_t n, int64_t inner, uint32_t* lines) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t f = flat[i];
    lines[i] = static_cast<uint32_t>(f / (n * inner) * inner + f % inner);
  }
}

// The result: sorted[l·n + j] is the flat index of the element that goes to place j of line l.
template <class E>
__global__ void __launch_bounds__(256)
    place_kernel(const int32_t* sorted, int64_t total, int64_t n, int64_t inner, const E* payload,
                 E* out, int32_t* positions) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t line = i / n, j = i % n;
    const int64_t to = line / inner * n * inner + j * inner + line % inner;
    const int64_t from = sorted[i];
    if (payload != nullptr) {
      out[to] = payload[from];
    } else {
      positions[to] = static_cast<int32_t>(from / inner % n);
    }
  }
}

// scatter_add's keys: each index clamped into [0, n), with its position.
__global__ void __launch_bounds__(256) clamp_kernel(const int32_t* indices, int64_t count,
                                                    int64_t n, uint32_t* keys, int32_t* positions) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    keys[i] = static_cast<uint32_t>(min(max(int64_t{indices[i]}, int64_t{0}), n - 1));
    positions[i] = static_cast<int32_t>(i);
  }
}

// The first of `count` sorted keys not below `key`.
__device__ int64_t lower_bound(const uint32_t* keys, int64_t count, uint32_t key) {
  int64_t low = 0, high = count;
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    if (keys[mid] < key) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

// a + b rounded to T (the half types added in float32, as the CPU's scatter_add adds them).
template <class T>
__device__ T add_rounded(T a, T b) {
  if constexpr (std::is_same_v<T, float16>) {
    return to_float16(to_float(a) + to_float(b));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return to_bfloat16(to_float(a) + to_float(b));
  } else {
    return a + b;
  }
}

// One thread per result element (o, r, j): zero, plus its run of updates in their order.
template <class T>
__global__ void __launch_bounds__(256)
    scatter_sum_kernel(const T* updates, int64_t outer, int64_t n, int64_t inner,
                       const uint32_t* keys, const int32_t* positions, int64_t count, T* out) {
  const int64_t total = outer * n * inner;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t k = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < total; k += stride) {
    const int64_t o = k / (n * inner), r = k / inner % n, j = k % inner;
    const auto key = static_cast<uint32_t>(r);
    T sum{};
    for (int64_t at = lower_bound(keys, count, key); at < count && keys[at] == key; ++at) {
      sum = add_rounded(sum, updates[(o * count + positions[at]) * inner + j]);
    }
    out[k] = sum;
  }
}

int blocks_for(int64_t n, int max_blocks) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, max_blocks)));
}

}  // namespace

cudaError_t launch_scan(bool multiply, DType dtype, const std::byte* in, int64_t outer, int64_t n,
                        int64_t inner, std::byte* out, int blocks, cudaStream_t stream) {
  visit_orderable(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* x = reinterpret_cast<const T*>(in);
    auto* y = reinterpret_cast<T*>(out);
    if (multiply) {
      scan_kernel<T, true><<<blocks, 256, 0, stream>>>(x, outer, n, inner, y);
    } else {
      scan_kernel<T, false><<<blocks, 256, 0, stream>>>(x, outer, n, inner, y);
    }
  });
  return cudaGetLastError();
}

cudaError_t launch_search_sorted(DType dtype, const std::byte* sorted, int64_t n,
                                 const std::byte* queries, int64_t count, int32_t* out, int blocks,
                                 cudaStream_t stream) {
  const int levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(n) + 1)));
  visit_orderable(dtype, [&](auto zero) {
    using T = decltype(zero);
    search_kernel<T><<<blocks, 256, 0, stream>>>(reinterpret_cast<const T*>(sorted), n, levels,
                                                 reinterpret_cast<const T*>(queries), count, out);
  });
  return cudaGetLastError();
}

void run_top_k(GpuContext& gpu, DType dtype, const std::byte* in, int64_t n, int64_t k,
               int32_t* out) {
  visit_orderable(dtype, [&](auto zero) {
    using T = decltype(zero);
    using Key = decltype(scalar::sort_key(T{}));
    const int max_blocks = gpu.multiprocessors() * 8;
    DeviceBuffer keys(gpu, n * sizeof(Key)), sorted_keys(gpu, n * sizeof(Key));
    DeviceBuffer values(gpu, n * sizeof(int32_t)), sorted_values(gpu, n * sizeof(int32_t));
    auto* k_in = reinterpret_cast<Key*>(keys.data());
    auto* k_out = reinterpret_cast<Key*>(sorted_keys.data());
    auto* v_in = reinterpret_cast<int32_t*>(values.data());
    auto* v_out = reinterpret_cast<int32_t*>(sorted_values.data());
    key_kernel<T, Key><<<blocks_for(n, max_blocks), 256, 0, gpu.stream()>>>(
        reinterpret_cast<const T*>(in), n, k_in, v_in);
    check_cuda(cudaGetLastError(), "launch of top_k's key kernel", gpu.ordinal());
    size_t scratch_bytes = 0;
    check_cuda(
        cub::DeviceRadixSort::SortPairsDescending(nullptr, scratch_bytes, k_in, k_out, v_in, v_out,
                                                  n, 0, sizeof(Key) * 8, gpu.stream()),
        "cub::DeviceRadixSort::SortPairsDescending (size query)", gpu.ordinal());
    DeviceBuffer scratch(gpu, scratch_bytes);
    check_cuda(
        cub::DeviceRadixSort::SortPairsDescending(scratch.data(), scratch_bytes, k_in, k_out, v_in,
                                                  v_out, n, 0, sizeof(Key) * 8, gpu.stream()),
        "cub::DeviceRadixSort::SortPairsDescending", gpu.ordinal());
    check_cuda(cudaMemcpyAsync(out, v_out, static_cast<size_t>(k) * sizeof(int32_t),
                               cudaMemcpyDeviceToDevice, gpu.stream()),
               "cudaMemcpyAsync (top_k's indices)", gpu.ordinal());
  });
}

namespace {

// CUB's stable radix sort of (key, value) pairs, ascending or descending, over the low `bits` of
// the keys; scratch from gpu's pool.
template <class Key>
void radix_sort_pairs(GpuContext& gpu, bool descending, const Key* k_in, Key* k_out,
                      const int32_t* v_in, int32_t* v_out, int64_t n, int bits) {
  const auto sort = [&](void* scratch, size_t& bytes) {
    return descending ? cub::DeviceRadixSort::SortPairsDescending(scratch, bytes, k_in, k_out, v_in,
                                                                  v_out, n, 0, bits, gpu.stream())
                      : cub::DeviceRadixSort::SortPairs(scratch, bytes, k_in, k_out, v_in, v_out, n,
                                                        0, bits, gpu.stream());
  };
  size_t scratch_bytes = 0;
  check_cuda(sort(nullptr, scratch_bytes), "cub::DeviceRadixSort (size query)", gpu.ordinal());
  DeviceBuffer scratch(gpu, scratch_bytes);
  check_cuda(sort(scratch.data(), scratch_bytes), "cub::DeviceRadixSort", gpu.ordinal());
}

template <class E>
void place(GpuContext& gpu, const int32_t* sorted, int64_t total, int64_t n, int64_t inner,
           const std::byte* payload, std::byte* out) {
  place_kernel<E><<<blocks_for(total, gpu.multiprocessors() * 8), 256, 0, gpu.stream()>>>(
      sorted, total, n, inner, reinterpret_cast<const E*>(payload), reinterpret_cast<E*>(out),
      reinterpret_cast<int32_t*>(out));
  check_cuda(cudaGetLastError(), "launch of sort's place kernel", gpu.ordinal());
}

}  // namespace

template <class T>
void scatter_sum(GpuContext& gpu, const std::byte* updates, int64_t outer, int64_t n, int64_t inner,
                 const uint32_t* keys, const int32_t* positions, int64_t count, std::byte* out) {
  const int64_t total = outer * n * inner;
  scatter_sum_kernel<T><<<blocks_for(total, gpu.multiprocessors() * 8), 256, 0, gpu.stream()>>>(
      reinterpret_cast<const T*>(updates), outer, n, inner, keys, positions, count,
      reinterpret_cast<T*>(out));
  check_cuda(cudaGetLastError(), "launch of scatter_add's sum kernel", gpu.ordinal());
}

void run_scatter_add(GpuContext& gpu, DType dtype, const std::byte* updates, const Shape& shape,
                     int axis, const int32_t* indices, int64_t count, std::byte* out) {
  const auto d = static_cast<size_t>(axis);
  const int64_t n = shape[d];
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= shape[k];
  for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
  const size_t key_bytes = static_cast<size_t>(count) * sizeof(uint32_t);
  DeviceBuffer keys(gpu, key_bytes), sorted_keys(gpu, key_bytes);
  DeviceBuffer positions(gpu, key_bytes), sorted_positions(gpu, key_bytes);
  auto* k_in = reinterpret_cast<uint32_t*>(keys.data());
  auto* k_out = reinterpret_cast<uint32_t*>(sorted_keys.data());
  auto* p_in = reinterpret_cast<int32_t*>(positions.data());
  auto* p_out = reinterpret_cast<int32_t*>(sorted_positions.data());
  if (count > 0) {
    clamp_kernel<<<blocks_for(count, gpu.multiprocessors() * 8), 256, 0, gpu.stream()>>>(
        indices, count, n, k_in, p_in);
    check_cuda(cudaGetLastError(), "launch of scatter_add's clamp kernel", gpu.ordinal());
    const int bits = std::max(1, static_cast<int>(std::ceil(std::log2(static_cast<double>(n)))));
    radix_sort_pairs(gpu, false, k_in, k_out, p_in, p_out, count, bits);
  }
  switch (dtype) {
    case DType::kFloat16:
      return scatter_sum<float16>(gpu, updates, outer, n, inner, k_out, p_out, count, out);
    case DType::kBFloat16:
      return scatter_sum<bfloat16>(gpu, updates, outer, n, inner, k_out, p_out, count, out);
    case DType::kFloat64:
      return scatter_sum<double>(gpu, updates, outer, n, inner, k_out, p_out, count, out);
    default:
      return scatter_sum<float>(gpu, updates, outer, n, inner, k_out, p_out, count, out);
  }
}

// Two stable passes: every element by its key (the lines mixed), then by its line, which keeps
// each line's elements in key order. Then each goes to its place.
void run_sort(GpuContext& gpu, DType key_dtype, const std::byte* keys, const SortSpec& spec,
              const std::byte* payload, std::byte* out) {
  const int64_t total = shape_size(spec.shape);
  const int64_t n = spec.shape[static_cast<size_t>(spec.axis)];
  const int64_t inner = total / n / [&] {
    int64_t outer = 1;
    for (int d = 0; d < spec.axis; ++d) outer *= spec.shape[static_cast<size_t>(d)];
    return outer;
  }();
  const int blocks = blocks_for(total, gpu.multiprocessors() * 8);
  DeviceBuffer flat(gpu, total * sizeof(int32_t)), by_key(gpu, total * sizeof(int32_t));
  auto* flat_in = reinterpret_cast<int32_t*>(flat.data());
  auto* flat_out = reinterpret_cast<int32_t*>(by_key.data());
  visit_orderable(key_dtype, [&](auto zero) {
    using T = decltype(zero);
    using Key = decltype(scalar::sort_key(T{}));
    DeviceBuffer k_in(gpu, total * sizeof(Key)), k_out(gpu, total * sizeof(Key));
    sort_key_kernel<T, Key><<<blocks, 256, 0, gpu.stream()>>>(
        reinterpret_cast<const T*>(keys), total, spec.descending && spec.payload_size > 0,
        reinterpret_cast<Key*>(k_in.data()), flat_in);
    check_cuda(cudaGetLastError(), "launch of sort's key kernel", gpu.ordinal());
    radix_sort_pairs(gpu, spec.descending, reinterpret_cast<const Key*>(k_in.data()),
                     reinterpret_cast<Key*>(k_out.data()), flat_in, flat_out, total,
                     static_cast<int>(sizeof(Key) * 8));
  });
  const int64_t lines = total / n;
  const int32_t* sorted = flat_out;
  if (lines > 1) {
    DeviceBuffer line_in(gpu, total * sizeof(uint32_t)), line_out(gpu, total * sizeof(uint32_t));
    line_kernel<<<blocks, 256, 0, gpu.stream()>>>(flat_out, total, n, inner,
                                                  reinterpret_cast<uint32_t*>(line_in.data()));
    check_cuda(cudaGetLastError(), "launch of sort's line kernel", gpu.ordinal());
    const int bits =
        std::max(1, static_cast<int>(std::ceil(std::log2(static_cast<double>(lines)))));
    radix_sort_pairs(gpu, false, reinterpret_cast<const uint32_t*>(line_in.data()),
                     reinterpret_cast<uint32_t*>(line_out.data()), flat_out, flat_in, total, bits);
    sorted = flat_in;
  }
  switch (spec.payload_size) {
    case 0:
      return place<int32_t>(gpu, sorted, total, n, inner, nullptr, out);
    case 1:
      return place<uint8_t>(gpu, sorted, total, n, inner, payload, out);
    case 2:
      return place<uint16_t>(gpu, sorted, total, n, inner, payload, out);
    case 4:
      return place<uint32_t>(gpu, sorted, total, n, inner, payload, out);
    default:
      return place<uint64_t>(gpu, sorted, total, n, inner, payload, out);
  }
}

}  // namespace spmd::kernels::cuda
