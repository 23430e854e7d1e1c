#include "runtime/gpu_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "spmd/error.h"

namespace spmd {
namespace {

constexpr int kAbi = 1;
constexpr const char* kFile = "libspmd_cuda.so";
constexpr const char* kCommFile = "libspmd_gpu_comm.so";

// The entry points of src/kernels/cuda/plugin.cc.
using AbiFn = int (*)() noexcept;
using VisibleFn = int (*)(char*, size_t) noexcept;
using NameFn = int (*)(int, char*, size_t) noexcept;
using RegisterFn = int (*)(char*, size_t) noexcept;
// The entry point of src/comm/gpu/gpu_comm_plugin.cc.
using CommRegisterFn = int (*)(char*, size_t, char*, size_t) noexcept;

struct Loaded {
  GpuPlugin info;
  NameFn name = nullptr;
};

// libspmd's own folder: where this function's code was loaded from.
std::string own_folder() {
  Dl_info where{};
  if (dladdr(reinterpret_cast<const void*>(&own_folder), &where) == 0 || !where.dli_fname) {
    return "";
  }
  return std::filesystem::path(where.dli_fname).parent_path().string();
}

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* named = std::getenv("SPMD_GPU_PLUGIN"); named && *named) {
    out.emplace_back(named);
    return out;  // named: only that one, so a wrong path is an error rather than a fallback
  }
  if (const std::string folder = own_folder(); !folder.empty()) {
    const std::filesystem::path beside = std::filesystem::path(folder) / kFile;
    if (std::filesystem::exists(beside)) out.push_back(beside.string());
  }
  out.emplace_back(kFile);  // the loader's path
  return out;
}

// Binds the entry points of `handle`; "" when all are there at this ABI, else why not.
std::string bind(void* handle, Loaded& l) {
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, "spmd_gpu_plugin_abi"));
  auto visible = reinterpret_cast<VisibleFn>(dlsym(handle, "spmd_gpu_visible"));
  auto name = reinterpret_cast<NameFn>(dlsym(handle, "spmd_gpu_device_name"));
  auto reg = reinterpret_cast<RegisterFn>(dlsym(handle, "spmd_gpu_register"));
  if (!abi || !visible || !name || !reg) return "it lacks spmd's GPU plugin entry points";
  if (abi() != kAbi) {
    return fmt::format("its plugin ABI is {}, and this libspmd speaks {}: rebuild them together",
                       abi(), kAbi);
  }
  std::array<char, 512> text{};
  if (reg(text.data(), text.size()) != 0) {
    return fmt::format("registering its backend failed: {}", text.data());
  }
  l.name = name;
  l.info.visible_gpus = visible(text.data(), text.size());
  if (l.info.visible_gpus == 0) l.info.why_no_gpu = text.data();
  return "";
}

// Loads the device collectives from `folders` (then the loader's path) and registers them; fills
// `info`'s collectives or why_no_collectives.
void load_collectives(const std::vector<std::string>& folders, GpuPlugin& info) {
  std::vector<std::string> paths;
  for (const std::string& folder : folders) {
    const std::filesystem::path beside = std::filesystem::path(folder) / kCommFile;
    if (!folder.empty() && std::filesystem::exists(beside)) paths.push_back(beside.string());
  }
  paths.emplace_back(kCommFile);
  std::vector<std::string> failures;
  for (const std::string& path : paths) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      failures.push_back(fmt::format("{}: {}", path, why ? why : "not loadable"));
      continue;
    }
    auto reg = reinterpret_cast<CommRegisterFn>(dlsym(handle, "spmd_gpu_comm_register"));
    std::array<char, 128> name{};
    std::array<char, 512> why{};
    if (reg == nullptr) {
      failures.push_back(fmt::format("{}: it lacks spmd_gpu_comm_register", path));
    } else if (reg(name.data(), name.size(), why.data(), why.size()) != 0) {
      failures.push_back(fmt::format("{}: {}", path, why.data()));
    } else {
      info.collectives = name.data();
      return;
    }
  }
  info.why_no_collectives = fmt::format(
      "the device collectives ({}) could not be loaded ({}): GPU collectives stage through the "
      "host",
      kCommFile, fmt::join(failures, "; "));
}

Loaded load() {
  Loaded l;
  std::vector<std::string> failures;
  for (const std::string& path : candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      failures.push_back(fmt::format("{}: {}", path, why ? why : "not loadable"));
      continue;
    }
    const std::string why = bind(handle, l);
    if (!why.empty()) {
      failures.push_back(fmt::format("{}: {}", path, why));
      continue;  // left loaded: unloading a library that started CUDA is not safe
    }
    l.info.loaded = true;
    l.info.path = path;
    load_collectives({std::filesystem::path(path).parent_path().string(), own_folder()}, l.info);
    return l;
  }
  l.info.why_not_loaded = fmt::format(
      "this build of spmd has no GPU support here: its CUDA plugin ({}) could not be loaded ({}); "
      "build spmd where CMake finds the CUDA toolkit (SPMD_CUDA=ON), or set SPMD_GPU_PLUGIN to "
      "the plugin's path",
      kFile, fmt::join(failures, "; "));
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const GpuPlugin& load_gpu_plugin() { return loaded().info; }

bool nvidia_driver_present() {
  std::error_code ignored;
  return std::filesystem::exists("/proc/driver/nvidia", ignored) ||
         std::filesystem::exists("/dev/nvidiactl", ignored);
}

std::string gpu_device_name(int ordinal) {
  const Loaded& l = loaded();
  if (!l.info.loaded) throw FailedPrecondition(l.info.why_not_loaded);
  std::array<char, 512> text{};
  if (l.name(ordinal, text.data(), text.size()) != 0) throw FailedPrecondition(text.data());
  return text.data();
}

std::string device_kind_of(const std::string& platform, int local_hardware_id) {
  return platform == "gpu" ? gpu_device_name(local_hardware_id) : "";
}

}  // namespace spmd
