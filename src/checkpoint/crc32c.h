// CRC-32C (Castagnoli), the checksum OCDBT's manifests and nodes and Zarr v3's shard indexes end
// with. Debian 12 packages no C or C++ CRC-32C library; these checksums cover only metadata
// (kilobytes per checkpoint), so a table-driven loop is fast enough and hardware CRC is not worth
// a dispatch.
#pragma once

#include <cstdint>
#include <span>

namespace spmd::checkpoint {

// The CRC-32C of `bytes` (initial value and final XOR 0xffffffff, as iSCSI and TensorStore use).
uint32_t crc32c(std::span<const char> bytes);

}  // namespace spmd::checkpoint
