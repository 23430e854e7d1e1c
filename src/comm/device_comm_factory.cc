#include "comm/device_comm_factory.h"

#include <map>
#include <mutex>

namespace spmd {
namespace {

// The registry: written when a plugin loads or a test overrides, read at a group's creation.
struct FactoryRegistry {
  std::mutex mutex;
  std::map<std::string, const DeviceCommFactory*, std::less<>> factories;
};

FactoryRegistry& factory_registry() {
  static FactoryRegistry r;
  return r;
}

const DeviceCommFactory* replace_factory(std::string_view platform,
                                         const DeviceCommFactory* factory) {
  FactoryRegistry& r = factory_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.factories.find(platform);
  const DeviceCommFactory* before = it == r.factories.end() ? nullptr : it->second;
  if (factory == nullptr) {
    if (it != r.factories.end()) r.factories.erase(it);
  } else {
    r.factories[std::string(platform)] = factory;
  }
  return before;
}

}  // namespace

void register_device_comm_factory(std::string_view platform, const DeviceCommFactory& factory) {
  replace_factory(platform, &factory);
}

const DeviceCommFactory* device_comm_factory(std::string_view platform) {
  FactoryRegistry& r = factory_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.factories.find(platform);
  return it == r.factories.end() ? nullptr : it->second;
}

DeviceCommFactoryOverride::DeviceCommFactoryOverride(std::string_view platform,
                                                     const DeviceCommFactory& factory)
    : platform_(platform), previous_(replace_factory(platform, &factory)) {}

DeviceCommFactoryOverride::~DeviceCommFactoryOverride() { replace_factory(platform_, previous_); }

}  // namespace spmd
