// The UCX transport's process-wide context and per-group workers (ucx_transport.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdio.h>  // open_memstream
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <sstream>
#include <string_view>
#include <vector>

#include "comm/registered_memory.h"
#include "comm/ucx_stream.h"
#include "comm/ucx_transport.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// The process's UCP context for one reach (ucx_transport.h), made on first use and kept for the
// life of the process (workers of groups freed at exit by static destructors still need it).
// Its resources are what UCX's variables allow. The across-hosts context registers the buffer
// pools' memory: only its transfers use registrations.
class UcxContext final : public MemoryRegistrar {
 public:
  static UcxContext& get(UcxReach reach) {
    if (reach == UcxReach::kWithinHost) {
      static UcxContext* within = new UcxContext(reach);
      return *within;
    }
    static UcxContext* across = [] {
      auto* c = new UcxContext(UcxReach::kAcrossHosts);
      set_memory_registrar(c);
      return c;
    }();
    return *across;
  }

  ucp_context_h handle() const { return context_; }
  const std::vector<std::string>& resources() const { return resources_; }
  const std::vector<std::string>& settings() const { return settings_; }

  void* register_range(void* base, size_t size) override {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    params.address = base;
    params.length = size;
    ucp_mem_h memh = nullptr;
    const ucs_status_t s = ucp_mem_map(context_, &params, &memh);
    if (s != UCS_OK) {
      throw Error(fmt::format("UCX cannot register {} bytes: {}", size, ucs_status_string(s)));
    }
    return memh;
  }
  void deregister(void* handle) noexcept override {
    ucp_mem_unmap(context_, static_cast<ucp_mem_h>(handle));
  }

 private:
  explicit UcxContext(UcxReach reach) {
    ucp_config_t* config = nullptr;
    ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
    if (s != UCS_OK) {
      throw Error(fmt::format("UCX cannot read its configuration (UCX_* variables): {}",
                              ucs_status_string(s)));
    }
    apply_defaults(config, reach);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_TAG;
    params.mt_workers_shared = 1;  // workers of several groups, on several threads
    s = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (s != UCS_OK) {
      throw Error(fmt::format("UCX cannot start: {} (check UCX_TLS and UCX_NET_DEVICES)",
                              ucs_status_string(s)));
    }
    resources_ = read_resources();
  }

  // spmd's default for one of UCX's variables: `key` as ucp_config_modify() takes it, `name` as
  // the user sets it.
  struct Setting {
    const char* key;
    const char* value;
    const char* name;
  };
  // Settings that go together, and the variables that, when the user set any of them, leave the
  // whole group to UCX (TCP's receive segment must not be smaller than its send segment).
  struct Default {
    std::initializer_list<Setting> settings;
    std::initializer_list<const char*> user_names;
  };

  // Within a host: large messages pipelined eagerly through shared memory in segments of 32 KiB
  // (UCX's default of 8 KiB measured 1.5× slower at 1 MiB; its FIFO's 16-bit lengths stop below
  // 64 KiB) into receives posted in advance. Across hosts: UCX's TCP moves large messages in
  // 64 KiB sends and 256 KiB receives (with its 8 KiB and 64 KiB, a 64 MiB all-reduce measured
  // 1.1–1.2× slower than spmd's own TCP, with these 0.85×); nothing else changes, so fabrics run
  // as UCX configures them. (UCX 1.13 takes the shared-memory segment size as MM_SEG_SIZE here
  // and TCP's as TX_SEG_SIZE: the transports' prefixed names would be ignored with a warning.)
  static std::initializer_list<Default> defaults(UcxReach reach) {
    static constexpr std::initializer_list<Default> kWithin = {
        {{{"RNDV_THRESH", "inf", "UCX_RNDV_THRESH"}}, {"UCX_RNDV_THRESH"}},
        {{{"MM_SEG_SIZE", "32832", "UCX_MM_SEG_SIZE"}},
         {"UCX_MM_SEG_SIZE", "UCX_SYSV_SEG_SIZE", "UCX_POSIX_SEG_SIZE"}},
    };
    static constexpr std::initializer_list<Default> kAcross = {
        {{{"TX_SEG_SIZE", "64k", "UCX_TCP_TX_SEG_SIZE"},
          {"RX_SEG_SIZE", "256k", "UCX_TCP_RX_SEG_SIZE"}},
         {"UCX_TCP_TX_SEG_SIZE", "UCX_TCP_RX_SEG_SIZE"}},
    };
    return reach == UcxReach::kWithinHost ? kWithin : kAcross;
  }

  // Applies spmd's defaults for `reach`, except for groups the user set; records each in
  // settings_, as ucx_settings() reports them.
  void apply_defaults(ucp_config_t* config, UcxReach reach) {
    for (const Default& d : defaults(reach)) {
      bool user_set = false;
      for (const char* name : d.user_names) {
        if (const char* value = std::getenv(name)) {
          settings_.push_back(fmt::format("{}={} (as set)", name, value));
          user_set = true;
        }
      }
      if (user_set) continue;
      for (const Setting& setting : d.settings) {
        const ucs_status_t s = ucp_config_modify(config, setting.key, setting.value);
        if (s != UCS_OK) {
          throw Error(fmt::format("UCX does not accept {}={}: {}", setting.key, setting.value,
                                  ucs_status_string(s)));
        }
        settings_.push_back(fmt::format("{}={} (spmd's default)", setting.name, setting.value));
      }
    }
  }

  // The "transport/device" names of the context's resources, from its printed description
  // (UCP has no query for them): lines "#      resource 1  :  md 1  dev 1  flags -- tcp/lo".
  std::vector<std::string> read_resources() const {
    char* text = nullptr;
    size_t size = 0;
    FILE* f = open_memstream(&text, &size);
    if (f == nullptr) return {};
    ucp_context_print_info(context_, f);
    std::fclose(f);
    std::vector<std::string> out;
    std::istringstream lines(std::string(text, size));
    std::free(text);
    for (std::string line; std::getline(lines, line);) {
      const size_t dashes = line.find("flags -- ");
      if (line.find(" resource ") == std::string::npos || dashes == std::string::npos) continue;
      std::string name = line.substr(dashes + 9);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
      if (!name.empty()) out.push_back(name);
    }
    return out;
  }

  ucp_context_h context_ = nullptr;
  std::vector<std::string> resources_;
  std::vector<std::string> settings_;  // the variables spmd sets a default for, and their values
};

// UCX transports that stay within a host (or are not for host memory).
bool local_transport(std::string_view tl) {
  for (std::string_view local : {"self", "sysv", "posix", "cma", "knem", "xpmem"}) {
    if (tl == local) return true;
  }
  return tl.starts_with("cuda") || tl.starts_with("rocm") || tl.starts_with("gdr") ||
         tl.starts_with("ze_");
}

std::string hex(const void* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::vector<unsigned char> unhex(const std::string& text, const std::string& from) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw Error(fmt::format("{} published a malformed UCX worker address", from));
  };
  if (text.empty() || text.size() % 2 != 0) {
    throw Error(fmt::format("{} published a malformed UCX worker address", from));
  }
  std::vector<unsigned char> out(text.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<unsigned char>(digit(text[2 * i]) * 16 + digit(text[2 * i + 1]));
  }
  return out;
}

class UcxWorkerImpl final : public UcxWorker, public std::enable_shared_from_this<UcxWorkerImpl> {
 public:
  explicit UcxWorkerImpl(UcxReach reach) : reach_(reach) {
    ucp_worker_params_t params{};
    params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // The group's lock serialises every use; the threads that hold it change.
    params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    const ucs_status_t s = ucp_worker_create(UcxContext::get(reach).handle(), &params, &worker_);
    if (s != UCS_OK) {
      throw Error(fmt::format("UCX cannot create a worker: {}", ucs_status_string(s)));
    }
    ucp_address_t* address = nullptr;
    size_t length = 0;
    if (ucp_worker_get_address(worker_, &address, &length) != UCS_OK) {
      ucp_worker_destroy(worker_);
      throw Error("UCX cannot tell its worker's address");
    }
    address_ = hex(address, length);
    ucp_worker_release_address(worker_, address);
  }
  ~UcxWorkerImpl() override { ucp_worker_destroy(worker_); }
  UcxWorkerImpl(const UcxWorkerImpl&) = delete;
  UcxWorkerImpl& operator=(const UcxWorkerImpl&) = delete;

  std::string address() const override { return address_; }

  std::unique_ptr<Stream> connect(const std::string& peer_address, std::string peer_name,
                                  uint32_t self_position, uint32_t peer_position) override {
    const std::vector<unsigned char> address = unhex(peer_address, peer_name);
    ucs_status_t& failure = failures_.emplace_back(UCS_OK);
    auto stream = std::make_unique<UcxStream>(shared_from_this(), worker_, std::move(peer_name),
                                              self_position, peer_position, &failure);
    stream->connect(reinterpret_cast<const ucp_address_t*>(address.data()),
                    reach_ == UcxReach::kAcrossHosts);
    return stream;
  }

 private:
  UcxReach reach_;
  ucp_worker_h worker_ = nullptr;
  std::string address_;
  // Each endpoint's failure status, written by UCX's error callback; a deque keeps them in place
  // until the worker (and with it every callback) is gone.
  std::deque<ucs_status_t> failures_;
};

}  // namespace

bool ucx_built() { return true; }

std::string ucx_summary() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  ucp_get_version(&major, &minor, &release);
  try {
    return fmt::format("UCX {}.{}.{}: {}", major, minor, release,
                       fmt::join(UcxContext::get(UcxReach::kAcrossHosts).resources(), ", "));
  } catch (const Error& e) {
    return fmt::format("UCX {}.{}.{}: {}", major, minor, release, e.what());
  }
}

std::string ucx_settings(UcxReach reach) {
  try {
    return fmt::format("{}", fmt::join(UcxContext::get(reach).settings(), ", "));
  } catch (const Error& e) {
    return e.what();
  }
}

bool ucx_has_fabric() {
  try {
    for (const std::string& r : UcxContext::get(UcxReach::kAcrossHosts).resources()) {
      const std::string_view tl = std::string_view(r).substr(0, r.find('/'));
      if (tl != "tcp" && !local_transport(tl)) return true;
    }
  } catch (const Error&) {
  }
  return false;
}

std::shared_ptr<UcxWorker> open_ucx_worker(UcxReach reach) {
  return std::make_shared<UcxWorkerImpl>(reach);
}

}  // namespace spmd
