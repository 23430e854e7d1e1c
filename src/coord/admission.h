// Who may hold a connection to the coordination service, so that no number of strangers keeps
// the job's own processes out. Every accepted connection is a stranger until it authenticates
// (a registration or a status query with the job's token). Three groups, each bounded on its own:
//   - processes: one slot per process id, reserved; the registrar refuses a second claim to an id,
//     so they never need more;
//   - strangers: at most one per process still to register plus kSpareStrangers. When one more
//     arrives the oldest is dropped: strangers cannot fill the room for good, and a process that
//     is dropped before its registration was read connects again (CoordClient retries);
//   - tools (spmd-status, spmdrun --status): at most kMaxTools being answered at once.
// So the service never holds more than num_processes + kSpareStrangers + kMaxTools connections,
// within the descriptors it reserves (service_context.cc), and never refuses a process for room.
//
// No sockets: the service drops what admit() returns. Not thread-safe (the service's event loop
// owns it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace spmd {

struct ServiceSession;

class Admission {
 public:
  using SessionPtr = std::shared_ptr<ServiceSession>;
  // Room for strangers beyond one per process still to register: status queries on their way to
  // authenticating, and a margin for processes that reconnect.
  static constexpr size_t kSpareStrangers = 128;
  static constexpr size_t kMaxTools = 64;

  // A connection just accepted joins the strangers. `unregistered` is how many processes have yet
  // to register. Returns the strangers to drop to make room, oldest first (already removed
  // here; the caller closes them).
  std::vector<SessionPtr> admit(const SessionPtr& session, size_t unregistered);
  // `session` registered as a process: it is no longer a stranger.
  void registered(ServiceSession& session);
  // `session` sent a status query with the job's token: it becomes a tool while its answer is
  // written, if fewer than kMaxTools are. Returns false, and leaves it a stranger, when not.
  bool became_tool(ServiceSession& session);
  // `session` closed: it leaves whichever group it was in.
  void closed(ServiceSession& session);

  size_t strangers() const { return strangers_.size(); }
  size_t tools() const { return tools_; }

 private:
  void leave_strangers(ServiceSession& session);

  std::map<uint64_t, std::weak_ptr<ServiceSession>> strangers_;  // by arrival, oldest first
  uint64_t next_arrival_ = 1;
  size_t tools_ = 0;
};

}  // namespace spmd
