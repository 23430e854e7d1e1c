#include "comm/device_comm_bootstrap.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "spmd/error.h"

namespace spmd {
namespace {

std::string prefix(const DeviceCommGroup& g) {
  return fmt::format("spmd/device_comm/{}/{}", g.name, g.generation);
}

std::string as_text(const FingerprintBytes& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::optional<Fingerprint> from_text(const std::string& text) {
  FingerprintBytes bytes{};
  if (text.size() != bytes.size()) return std::nullopt;
  std::memcpy(bytes.data(), text.data(), bytes.size());
  return decode(bytes);
}

}  // namespace

std::string exchange_device_comm_id(distributed::Client& client, const DeviceCommGroup& group,
                                    const std::function<std::string()>& make_id,
                                    std::chrono::milliseconds timeout) {
  const std::string key = prefix(group) + "/id";
  if (group.rank == 0) {
    std::string id = make_id();
    client.key_value_set(key, id);
    return id;
  }
  try {
    return client.blocking_key_value_get(key, timeout);
  } catch (const DeadlineExceeded&) {
    throw DeadlineExceeded(fmt::format(
        "the device communicator {} (generation {}): rank 0 (process {}) did not publish its id "
        "within {} ms; it has not reached the same collective as rank {} (process {})",
        group.name, group.generation, group.processes.at(0), timeout.count(), group.rank,
        group.processes.at(static_cast<size_t>(group.rank))));
  }
}

void check_first_call(distributed::Client& client, const DeviceCommGroup& group,
                      const Fingerprint& mine, std::chrono::milliseconds timeout) {
  const std::string dir = prefix(group) + "/first_call";
  client.key_value_set(fmt::format("{}/{}", dir, group.rank), as_text(encode(mine)));
  const int size = static_cast<int>(group.processes.size());
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::vector<std::optional<Fingerprint>> calls(static_cast<size_t>(size));
  for (;;) {
    for (const auto& [key, value] : client.key_value_dir_get(dir)) {
      const int rank = std::atoi(key.substr(dir.size() + 1).c_str());
      if (rank >= 0 && rank < size) calls[static_cast<size_t>(rank)] = from_text(value);
    }
    std::vector<int> missing;
    for (int r = 0; r < size; ++r) {
      if (!calls[static_cast<size_t>(r)]) missing.push_back(r);
    }
    if (missing.empty()) break;
    if (std::chrono::steady_clock::now() >= until) {
      throw DeadlineExceeded(fmt::format(
          "{} on the device communicator {}: rank(s) {} had not reached their first collective "
          "within {} ms",
          mine.describe(), group.name, fmt::join(missing, ", "), timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int r = 0; r < size; ++r) {
    const Fingerprint& theirs = *calls[static_cast<size_t>(r)];
    if (!(theirs == mine)) {
      throw CollectiveMismatch(
          mismatch_message(mine, group.processes.at(static_cast<size_t>(group.rank)), theirs,
                           group.processes.at(static_cast<size_t>(r))));
    }
  }
}

}  // namespace spmd
