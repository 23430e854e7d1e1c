// spmd::distributed::initialize / shutdown and the process-global state they manage.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "coord/coord_client.h"
#include "coord/service.h"
#include "runtime/gpu_plugin.h"
#include "runtime/host_id.h"
#include "runtime/io_thread.h"
#include "runtime/peer_failure_exit.h"
#include "runtime/resolved_options.h"
#include "runtime/runtime_state.h"
#include "runtime/session_work.h"
#include "runtime/topology_view.h"
#include "spmd/distributed.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// How long a failing initialize() keeps process 0's service up so the others hear why.
constexpr std::chrono::milliseconds kNoticeFlushTimeout(1000);

// After its own shutdown barrier, process 0 keeps the service up this long at most, so the
// other processes receive their answers before it goes away.
constexpr std::chrono::milliseconds kServiceDrainTimeout(5000);

// How long shutdown() waits for work it interrupted past its deadline (a checkpoint save in the
// middle of a file write) before it goes on beside it.
constexpr std::chrono::milliseconds kInterruptedWorkGrace(30000);

struct Runtime {
  std::mutex mu;
  bool initialized = false;
  bool devices_queried = false;
  bool atexit_registered = false;
  // Between shutdown()'s start and its end: no new SessionWork may begin.
  bool closing = false;
  // A session was shut down and no new one initialized: work that needs the cluster is refused.
  bool shut_down = false;
  ResolvedOptions options;
  // The collectives engine's settings: read at initialize(), or at the first collective of a
  // process running alone.
  std::optional<CommOptions> comm_options;
  std::shared_ptr<const DeviceView> view;
  // Destroyed in reverse order: client before the io thread its strand lives on. Shared with the
  // SessionWork in flight, which may outlive the session (session_work.h).
  std::shared_ptr<IoThread> io;
  std::unique_ptr<CoordService> service;
  std::shared_ptr<CoordClient> client;
  std::unique_ptr<distributed::Client> public_client;
  // session_object<T>(): dropped at shutdown, before the client.
  std::map<std::type_index, std::shared_ptr<void>> attachments;
  // The session's work in flight, which shutdown() waits for.
  std::shared_ptr<WorkRegistry> work = std::make_shared<WorkRegistry>();
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

void configure_logging() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* level = std::getenv("SPMD_LOG_LEVEL");
    spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
    spdlog::set_pattern("[%H:%M:%S.%e] spmd %l: %v");
  });
}

std::shared_ptr<const DeviceView> single_process_view() {
  EnvReader env;
  const int count = default_cpu_device_count(env);
  const std::string host = local_host_id(env);
  auto view = std::make_shared<DeviceView>();
  for (int i = 0; i < count; ++i) view->devices.emplace_back(i, 0, i, "cpu", host);
  view->local_devices = view->devices;
  return view;
}

// shutdown()'s first step: the session's work in flight ends, each up to its deadline; past it,
// the session is interrupted so that its waits fail, and a last grace period passes.
void finish_session_work(WorkRegistry& work, CoordClient* client) {
  const auto left = work.wait_until_done_or_due();
  if (left.empty()) return;
  const std::string what = fmt::format("{}", fmt::join(left, "; "));
  spdlog::error("shutdown(): still running past its deadline, so interrupted: {}", what);
  if (client)
    client->interrupt("distributed::shutdown() interrupted work past its deadline: " + what);
  if (!work.wait_until_empty(std::chrono::steady_clock::now() + kInterruptedWorkGrace)) {
    spdlog::error(
        "shutdown(): still running {} s after it was interrupted, so shutdown goes on beside it "
        "(it keeps the connection it uses until it ends, and its calls fail): {}",
        kInterruptedWorkGrace.count() / 1000, what);
  }
}

void shutdown_at_exit() {
  try {
    distributed::shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmd: shutdown at exit: %s\n", e.what());
  }
}

}  // namespace

std::shared_ptr<const DeviceView> current_device_view() {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  if (r.initialized) return r.view;
  r.devices_queried = true;
  return single_process_view();
}

CommHandles comm_handles() {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  CommHandles h;
  if (!r.comm_options) r.comm_options = read_comm_options(EnvReader());
  h.options = *r.comm_options;
  if (!r.initialized) {
    r.devices_queried = true;
    h.view = single_process_view();
    return h;
  }
  h.view = r.view;
  h.coord = r.client;
  if (r.client) h.data_address = r.client->local_address();
  h.setup_timeout = r.options.initialization_timeout;
  return h;
}

std::unique_ptr<SessionWork> SessionWork::begin(const std::string& what,
                                                std::chrono::milliseconds timeout) {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  if (r.closing || (!r.initialized && r.shut_down)) {
    throw FailedPrecondition(fmt::format(
        "{}: distributed::shutdown() {} in this process, so the cluster it needs is gone; finish "
        "it before shutdown() (AsyncCheckpointer::wait_until_finished())",
        what, r.closing ? "has begun" : "was called"));
  }
  if (!r.initialized) {
    r.devices_queried = true;
    return std::make_unique<SessionWork>(nullptr, 0, 0, 1, nullptr, nullptr);
  }
  const uint64_t id = r.work->add(what, std::chrono::steady_clock::now() + timeout);
  return std::make_unique<SessionWork>(r.work, id, r.view->process_index, r.view->process_count,
                                       r.io, r.client);
}

namespace {

// session_generation(): 0 is no session's, so a thread's empty cache never matches.
std::atomic<uint64_t> generation{1};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

}  // namespace

uint64_t session_generation() { return generation.load(std::memory_order_acquire); }

std::shared_ptr<void> session_slot(std::type_index type,
                                   const std::function<std::shared_ptr<void>()>& make) {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  if (!r.initialized) r.devices_queried = true;
  auto& slot = r.attachments[type];
  if (!slot) slot = make();
  return slot;
}

namespace distributed {

namespace {

// The device view of a process running alone.
std::shared_ptr<const DeviceView> alone_view(const ResolvedOptions& opts,
                                             const std::string& host_id) {
  auto view = std::make_shared<DeviceView>();
  for (int hw : opts.local_device_ids) {
    view->devices.emplace_back(static_cast<int>(view->devices.size()), 0, hw, opts.platform,
                               host_id, device_kind_of(opts.platform, hw));
  }
  view->local_devices = view->devices;
  return view;
}

// Process 0's coordination service, started; null where spmd-coordinator serves the cluster or
// this is another process.
std::unique_ptr<CoordService> start_service(const ResolvedOptions& opts) {
  if (opts.process_id != 0 || opts.external_coordinator) return nullptr;
  ServiceOptions so;
  so.num_processes = opts.num_processes;
  so.bind_address = opts.bind_address;
  so.heartbeat_timeout = opts.heartbeat_timeout;
  so.auth_token = opts.auth_token;
  so.status_http_address = opts.status_http;
  auto service = std::make_unique<CoordService>(so);
  service->start();
  if (!opts.status_http.empty()) {
    std::fprintf(stderr, "spmd: status page at %s\n", service->status_url().c_str());
  }
  return service;
}

// What this process registers with, and how it reacts to a failure: the user's callback, or
// the one-line exit.
ClientConfig client_config(const Options& options, const ResolvedOptions& opts,
                           const CoordService* service) {
  ClientConfig cc;
  cc.address = opts.coordinator_address;
  cc.process_id = opts.process_id;
  cc.num_processes = opts.num_processes;
  cc.auth_token = opts.auth_token;
  cc.host_id = local_host_id(EnvReader());
  cc.hostname = local_hostname();
  cc.pid = ::getpid();
  for (int hw : opts.local_device_ids) {
    wire::DeviceInfo d;
    d.set_local_hardware_id(hw);
    d.set_platform(opts.platform);
    d.set_device_kind(device_kind_of(opts.platform, hw));
    cc.devices.push_back(d);
  }
  cc.service_in_process_0 = !opts.external_coordinator;
  cc.initialization_timeout = opts.initialization_timeout;
  cc.heartbeat_timeout = opts.heartbeat_timeout;
  if (options.on_peer_failure) {
    cc.on_failure = [user = options.on_peer_failure](const FailureReport& f) {
      user(PeerFailureInfo{f.process_id, f.host, f.pid, f.reason});
    };
  } else {
    cc.on_failure = [self = opts.process_id, service](const FailureReport& f) {
      exit_on_peer_failure(self, service, f);
    };
  }
  return cc;
}

void check_can_initialize(const Runtime& r) {
  if (r.initialized) {
    throw FailedPrecondition(
        "spmd::distributed::initialize() was already called in this process; call it once, at "
        "the start of main() (or shutdown() first to join another cluster)");
  }
  if (r.devices_queried) {
    throw FailedPrecondition(
        "spmd::distributed::initialize() must be called before any device query (devices(), "
        "device_count(), process_index(), …); move it to the start of main()");
  }
}

}  // namespace

void initialize(const Options& options) {
  configure_logging();
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  check_can_initialize(r);
  ResolvedOptions opts = resolve_options(options, EnvReader());
  CommOptions comm_options = read_comm_options(EnvReader());  // bad values fail here, early
  if (options.transport) {
    comm_options.transport = parse_transport(*options.transport, "Options::transport");
  }
  if (options.collective_timeout) {
    if (options.collective_timeout->count() < 0) {
      throw InvalidArgument("Options::collective_timeout must not be negative (zero: no limit)");
    }
    comm_options.collective_timeout = std::nullopt;
    if (options.collective_timeout->count() > 0) {
      comm_options.collective_timeout = *options.collective_timeout;
    }
  }
  if (opts.single_process) {
    r.view = alone_view(opts, local_host_id(EnvReader()));
    r.options = std::move(opts);
    r.comm_options = comm_options;
    r.initialized = true;
    r.shut_down = false;
    return;
  }
  auto io = std::make_shared<IoThread>();
  std::unique_ptr<CoordService> service = start_service(opts);
  auto client = CoordClient::create(io->context(), client_config(options, opts, service.get()));
  wire::Topology topology;
  try {
    topology = client->start();
  } catch (const std::exception& e) {
    client->close();
    if (service) {
      // The others are told why the service goes away before it does.
      service->fail_registrations(
          fmt::format("process 0, which hosts the coordination service, gave up: {}", e.what()));
      service->wait_until_disconnected(kNoticeFlushTimeout);
      service->stop();
    }
    throw;
  }
  r.view = view_from_topology(topology, opts.process_id, opts.num_processes);
  r.options = std::move(opts);
  r.comm_options = comm_options;
  r.io = std::move(io);
  r.service = std::move(service);
  r.client = client;
  r.public_client = std::make_unique<Client>(client);
  r.initialized = true;
  r.shut_down = false;
  spdlog::info("process {} of {} joined: {} local devices; transport {}{}", r.options.process_id,
               r.options.num_processes, r.view->local_devices.size(),
               transport_name(comm_options.transport),
               comm_options.transport == CommOptions::Transport::kAuto
                   ? " (shared memory within a host; across hosts ucx over a fabric, else tcp)"
                   : "");
  if (!options.on_peer_failure) arm_peer_failure_exit(r.options.process_id);
  if (!r.atexit_registered) {
    r.atexit_registered = true;
    std::atexit(shutdown_at_exit);
  }
}

void shutdown() {
  Runtime& r = runtime();
  std::unique_lock lock(r.mu);
  if (!r.initialized || r.closing) return;
  // Work in flight (checkpoint saves) ends first, with the session as it was (session_work.h).
  r.closing = true;
  const std::shared_ptr<WorkRegistry> work = r.work;
  const std::shared_ptr<CoordClient> running_client = r.client;
  lock.unlock();
  finish_session_work(*work, running_client.get());
  lock.lock();
  r.closing = false;
  r.shut_down = true;
  r.initialized = false;
  disarm_peer_failure_exit();
  r.devices_queried = false;
  r.view.reset();
  r.comm_options.reset();  // the next session reads the environment again
  // Take the parts out so the barrier below does not hold the lock device queries need.
  auto attachments = std::move(r.attachments);
  r.attachments.clear();
  generation.fetch_add(1, std::memory_order_acq_rel);  // threads' kept objects are stale now
  auto public_client = std::move(r.public_client);
  auto client = std::move(r.client);
  auto service = std::move(r.service);
  auto io = std::move(r.io);
  const auto timeout = r.options.shutdown_timeout;
  lock.unlock();
  // What the collectives engine kept (sockets, shared memory) closes before the client.
  attachments.clear();
  std::exception_ptr failure;
  if (client) {
    try {
      client->shutdown(timeout);
    } catch (const Error&) {
      failure = std::current_exception();
    }
  }
  if (service) {
    service->wait_until_disconnected(kServiceDrainTimeout);
    service->stop();
  }
  public_client.reset();
  client.reset();
  service.reset();
  io.reset();
  if (failure) std::rethrow_exception(failure);
}

void interrupt(const std::string& reason) {
  std::shared_ptr<CoordClient> client;
  {
    Runtime& r = runtime();
    std::lock_guard lock(r.mu);
    if (!r.initialized) return;
    client = r.client;
  }
  if (client) client->interrupt(reason);
}

bool is_initialized() {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  return r.initialized;
}

Client& client() {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  if (!r.initialized) {
    throw FailedPrecondition(
        "spmd::distributed::client() needs spmd::distributed::initialize() first");
  }
  if (!r.public_client) {
    throw FailedPrecondition(
        "this process runs alone (no coordinator address, process count or id was given or "
        "detected), so there is no coordination service to talk to");
  }
  return *r.public_client;
}

}  // namespace distributed
std::chrono::milliseconds wait_timeout() {
  const auto t = comm_handles().options.collective_timeout;
  if (!t) return std::chrono::hours(24 * 365);  // "no limit"
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(*t));
}

int preemption_signal() {
  Runtime& r = runtime();
  std::lock_guard lock(r.mu);
  return r.initialized ? r.options.preemption_signal : SIGTERM;
}

int requested_cpu_threads_per_device() {
  {
    Runtime& r = runtime();
    std::lock_guard lock(r.mu);
    if (r.initialized) return r.options.cpu_threads_per_device;
  }
  return requested_cpu_threads(EnvReader());
}

}  // namespace spmd
