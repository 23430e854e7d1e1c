// Collective work that outlives the call that started it (a checkpoint save, in the foreground or
// on an AsyncCheckpointer's thread), and the rule that distributed::shutdown() waits for it.
//
// A SessionWork holds what its work needs from the runtime session it began in: this process's
// index and the process count as they were then, the coordination client, and the thread its
// connection runs on. The work reads these from the SessionWork, never from the runtime again, so
// a shutdown() racing with it cannot change its process count mid-run or free the client under
// it.
//
// shutdown() (explicit, or at exit) first waits until every SessionWork has ended, each up to its
// deadline (which the work moves on as it makes progress). Past the deadline it interrupts the
// session, so that the work's waits fail with an error saying so, and waits a little longer. The
// client and its thread live as long as any SessionWork holds them, so even work that outlives
// that wait touches no freed memory: its calls fail instead.
//
// Thread safety: begin() and shutdown() may race from any threads; one SessionWork is used by one
// thread at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "spmd/coordination_client.h"

namespace spmd {

class CoordClient;
class IoThread;

// The work a session has in flight, with each one's description and deadline. Thread-safe.
class WorkRegistry {
 public:
  using Clock = std::chrono::steady_clock;

  uint64_t add(std::string what, Clock::time_point due);
  void set_due(uint64_t id, Clock::time_point due);
  void remove(uint64_t id);

  // Waits until every entry is removed or every remaining one is past its deadline (deadlines
  // moved meanwhile are honoured); returns the descriptions of those left.
  std::vector<std::string> wait_until_done_or_due();
  // Waits until every entry is removed or `until` passes; true when none is left.
  bool wait_until_empty(Clock::time_point until);

 private:
  struct Entry {
    std::string what;
    Clock::time_point due;
  };
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<uint64_t, Entry> entries_;
  uint64_t next_id_ = 0;
};

class SessionWork {
 public:
  // Starts work described by `what` ("saving checkpoint /ckpt/7"), due `timeout` from now. Before
  // initialize() the process runs alone: index 0 of 1, no client (and, as a device query does,
  // this makes a later initialize() refuse). Throws FailedPrecondition once shutdown() has begun
  // or after it, naming `what`: the cluster it would need is gone.
  static std::unique_ptr<SessionWork> begin(const std::string& what,
                                            std::chrono::milliseconds timeout);
  ~SessionWork();
  SessionWork(const SessionWork&) = delete;
  SessionWork& operator=(const SessionWork&) = delete;

  int process_index() const { return process_index_; }
  int process_count() const { return process_count_; }
  // The session's coordination service. Throws FailedPrecondition when the process runs alone.
  distributed::Client& client();
  // The work made progress: it is due `timeout` from now.
  void extend(std::chrono::milliseconds timeout);

  // For the runtime: a SessionWork of a cluster session.
  SessionWork(std::shared_ptr<WorkRegistry> registry, uint64_t id, int process_index,
              int process_count, std::shared_ptr<IoThread> io, std::shared_ptr<CoordClient> coord);

 private:
  std::shared_ptr<WorkRegistry> registry_;  // null when the process runs alone
  uint64_t id_ = 0;
  int process_index_ = 0;
  int process_count_ = 1;
  // Destroyed in reverse order: the client before the thread its connection runs on.
  std::shared_ptr<IoThread> io_;
  std::unique_ptr<distributed::Client> client_;
};

}  // namespace spmd
