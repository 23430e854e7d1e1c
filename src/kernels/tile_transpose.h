// Matrix transposes of 4-byte and 8-byte elements through vector registers: 8 × 8 tiles of 4-byte
// elements (4 × 4 of 8-byte ones) loaded a row to a register, transposed by AVX2's unpack and
// permute instructions (the sequence Eigen's ptranspose of a PacketBlock uses), stored a row to a
// register; the tiles taken in blocks of kTransposeBlock × kTransposeBlock elements, so that a
// block's input and output lines stay in cache and its pages in the TLB while it is read and
// written. The bytes are moved, never computed on: a signaling NaN or a subnormal comes out as
// it went in, whatever the thread's floating-point mode (OpenBLAS's omatcopy multiplies by its
// alpha and quieted a signaling NaN; Eigen's packets are chosen when a file is compiled, and
// this build's baseline is SSE2). Elements past the last whole tile of a block are copied one at
// a time.
//
// Why: layout.cc's 16 × 16 Eigen transposes of strided blocks, one band of the result's rows
// after another, read each of the input's rows a page apart; 4096 × 2048 float32 took 6.2 ms on
// two cores of the Zen 5 (JAX 11.8), 2.7-3.0 in these blocks. Pure; thread-safe. Internal to
// kernels/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spmd::kernels {

constexpr int64_t kTransposeBlock = 128;

// Whether transpose_rows takes elements of `element_size` bytes here: 4 or 8, on an x86-64 CPU
// with AVX2.
bool register_transpose_takes(size_t element_size);

// out = the transpose of rows [first, last) of the row-major rows × cols matrix `in`:
// out[j * rows + i] = in[i * cols + j] for first <= i < last, j < cols (out is cols × rows, and
// only those columns of it are written). element_size: 4 or 8, where register_transpose_takes.
void transpose_rows(size_t element_size, const std::byte* in, int64_t rows, int64_t cols,
                    int64_t first, int64_t last, std::byte* out);

// The same one element at a time, for any element size: the reference the tests compare with,
// and the path of a CPU without AVX2.
void transpose_rows_portable(size_t element_size, const std::byte* in, int64_t rows, int64_t cols,
                             int64_t first, int64_t last, std::byte* out);

}  // namespace spmd::kernels
