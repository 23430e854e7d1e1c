// The coordination service's client, as every process sees it after initialize().
//
// Keys, key prefixes and barrier ids are text: valid UTF-8, else InvalidArgument naming the call
// and the first bad byte (encode binary names first, as hex, say). Values are any bytes.
//
// A Client is safe for concurrent use from many threads. Every call goes to the coordination
// service and blocks until it answers. No call waits without a deadline: blocking calls take a
// timeout, and every call throws PeerFailure at once when another process of the cluster has died
// (with Options::on_peer_failure set; without it the process exits, see distributed.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spmd {

class CoordClient;  // The implementation, in src/coord/.

namespace distributed {

class Client {
 public:
  explicit Client(std::shared_ptr<CoordClient> impl);

  // Stores `value` (any bytes) under `key`. Throws AlreadyExists when the key holds a value and
  // allow_overwrite is false.
  void key_value_set(const std::string& key, const std::string& value,
                     bool allow_overwrite = false);

  // Returns the value of `key`, waiting until some process sets it. Throws DeadlineExceeded
  // naming the key when `timeout` passes first.
  std::string blocking_key_value_get(const std::string& key, std::chrono::milliseconds timeout);

  // Returns the value of `key`, or nullopt when it is not set. Never waits for the key.
  std::optional<std::string> key_value_try_get(const std::string& key);

  // Returns every (key, value) under the directory `prefix`: keys that start with `prefix`
  // followed by '/' (a trailing '/' on `prefix` is optional), in key order. Empty when none.
  std::vector<std::pair<std::string, std::string>> key_value_dir_get(const std::string& prefix);

  // Deletes `key` and every key under the directory `key/`. Deleting an absent key is not an
  // error.
  void key_value_delete(const std::string& key);

  // Adds `delta` to the integer stored (as decimal text) under `key`, creating it at 0, and
  // returns the new value. Atomic across processes. Throws InvalidArgument when the key holds
  // something other than an integer.
  int64_t key_value_increment(const std::string& key, int64_t delta);

  // Waits until every process in `process_ids` (all processes when empty) has called
  // wait_at_barrier with the same `id`. A process's n-th call with an id meets the others' n-th
  // calls, so ids may be reused in a loop. Throws DeadlineExceeded in every waiter when one
  // waiter's `timeout` passes first, naming how many arrived and which processes did not;
  // PeerFailure at once when a participant has called shutdown() (it will never arrive);
  // FailedPrecondition when this process is already waiting on `id` (from another thread);
  // InvalidArgument when the waiters disagree on `process_ids`.
  void wait_at_barrier(const std::string& id, std::chrono::milliseconds timeout,
                       const std::vector<int>& process_ids = {});

  // The ids of the processes the service considers alive (not dead, not shut down), ascending.
  std::vector<int> get_live_processes();

 private:
  std::shared_ptr<CoordClient> impl_;
};

}  // namespace distributed
}  // namespace spmd
