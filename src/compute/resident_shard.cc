#include "compute/resident_shard.h"

#include <memory>
#include <span>
#include <utility>

#include "array/shard_placement.h"
#include "kernels/backend.h"
#include "spmd/device.h"

namespace spmd {
namespace {

// A deferred HostArray's source: a block in device memory, copied to the host on first read by
// the backend that made it (still the one when an override installed for a test has ended).
class DeviceBlockSource final : public DeferredSource {
 public:
  explicit DeviceBlockSource(Block block)
      : block_(std::move(block)), backend_(kernels::backend_of(block_.memory())) {}

  void fetch(std::span<std::byte> out) const override {
    if (out.empty()) return;
    const std::shared_ptr<void> bound = backend_.bind_thread(block_.memory());
    backend_.copy(block_.bytes().data(), block_.memory(), out.data(), MemorySpace::host(),
                  out.size());
  }
  void wait_ready() const override {
    const std::shared_ptr<void> bound = backend_.bind_thread(block_.memory());
    backend_.synchronize(block_.memory());
  }
  const Block& block() const { return block_; }

 private:
  Block block_;
  const kernels::Backend& backend_;
};

// The shard placer (array/shard_placement.h): a shard of a device whose backend computes in its
// own memory is copied there once and kept as a resident shard; a host device's stays as it is.
HostArray place_on_device(const Device& device, HostArray data) {
  const kernels::Backend& backend = kernels::backend_for(device.platform());
  const MemorySpace memory = backend.memory(device.local_hardware_id());
  if (memory == MemorySpace::host() || resident_block(data, memory)) return data;
  const std::shared_ptr<void> bound = backend.bind_thread(memory);
  return resident_shard(Block(std::move(data)).to_memory(memory));
}

// Installed when libspmd loads, before any Array is made (constant-initialised on both sides).
[[maybe_unused]] const bool placer_installed = (set_shard_placer(&place_on_device), true);

}  // namespace

HostArray resident_shard(Block block) {
  const DType dtype = block.dtype();
  Shape shape = block.shape();
  return HostArray::deferred(dtype, std::move(shape),
                             std::make_shared<const DeviceBlockSource>(std::move(block)));
}

std::optional<Block> resident_block(const HostArray& data, MemorySpace memory) {
  const auto* source = dynamic_cast<const DeviceBlockSource*>(data.deferred_source());
  if (source == nullptr || source->block().memory() != memory) return std::nullopt;
  return source->block().reshape(data.shape());
}

}  // namespace spmd
