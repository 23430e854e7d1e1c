// The GPU platform's plugin: libspmd_cuda, the CUDA kernels and memory (src/kernels/cuda), built
// beside libspmd as a JAX PJRT plugin is beside jaxlib, and loaded with dlopen only when GPUs may
// be used, so that a CPU-only job never loads CUDA or cuBLAS. Loading it makes its backend
// kernels::backend_for("gpu") and says how many GPUs this process sees.
//
// Where it is looked for, in order: the file SPMD_GPU_PLUGIN names; libspmd_cuda.so in
// libspmd's own folder (the build tree's and the installed layout); the dynamic loader's path.
// Once it is loaded, libspmd_gpu_comm.so (the device collectives) is looked for beside it, then
// beside libspmd, then on the loader's path.
// Thread-safe; the plugin stays loaded until the process ends.
#pragma once

#include <string>

namespace spmd {

struct GpuPlugin {
  bool loaded = false;
  std::string path;            // the file loaded, or "" when none
  std::string why_not_loaded;  // where it was looked for and what failed, when not loaded
  int visible_gpus = 0;        // GPUs this process sees (CUDA_VISIBLE_DEVICES applied)
  std::string why_no_gpu;      // the driver's answer when it sees none
  // The device collectives (libspmd_gpu_comm, loaded beside the plugin, registers them as the
  // GPU platform's device communicators: comm/device_comm_factory.h): their name ("NCCL
  // 2.28.9"), or "" with the reason when they could not be loaded, and GPU collectives stage
  // through the host engine instead.
  std::string collectives;
  std::string why_no_collectives;
};

// Loads the plugin on the first call and answers the same after.
const GpuPlugin& load_gpu_plugin();

// Whether this machine has an NVIDIA driver at all (/proc/driver/nvidia or /dev/nvidiactl),
// found without loading anything: where it has none, choosing the platform by default does not
// load the plugin.
bool nvidia_driver_present();

// The CUDA name of GPU `ordinal` ("NVIDIA H100 80GB HBM3"), JAX's device_kind. Throws
// FailedPrecondition when the plugin is not loaded or the GPU cannot be used.
std::string gpu_device_name(int ordinal);

// Device::device_kind's value for device `local_hardware_id` of `platform`: the GPU's name on
// "gpu", "" (the platform's own name) otherwise.
std::string device_kind_of(const std::string& platform, int local_hardware_id);

}  // namespace spmd
