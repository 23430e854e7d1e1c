// The coordination service's key-value store: the state and its rules, without networking.
//
// Keys are non-empty strings; values are any bytes. Keys form directories by '/': the directory
// "a" holds "a/b" and "a/b/c". Waiters registered for an absent key run, once, when a set() or
// increment() gives the key a value. Not thread-safe: the service calls it from its one event
// loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace spmd {

class KvStore {
 public:
  using Waiter = std::function<void(const std::string& value)>;

  // Stores `value` under `key`. Returns false, storing nothing, when the key holds a value and
  // allow_overwrite is false. Runs the key's waiters.
  bool set(const std::string& key, std::string value, bool allow_overwrite);

  // The value of `key`, or nullptr. The pointer is valid until the next mutation.
  const std::string* find(const std::string& key) const;

  // Every (key, value) whose key starts with `directory` + "/" (a trailing '/' on `directory` is
  // not doubled), in key order.
  std::vector<std::pair<std::string, std::string>> dir_get(std::string_view directory) const;

  // Removes `key` and every key under the directory `key`. Waiters are unaffected.
  void erase(const std::string& key);

  // Adds `delta` to the decimal integer under `key` (0 when absent) and returns the new value,
  // or an error message when the stored value is not an integer or the sum overflows. Runs the
  // key's waiters.
  std::variant<int64_t, std::string> increment(const std::string& key, int64_t delta);

  // Registers `waiter` to run when `key` gets a value. The caller checks find() first. Returns a
  // token for cancel_wait().
  uint64_t wait(const std::string& key, Waiter waiter);

  // Drops a waiter that has not run. Returns false when it already ran or was cancelled.
  bool cancel_wait(uint64_t token);

  size_t size() const { return entries_.size(); }
  size_t waiter_count() const { return waiter_keys_.size(); }

 private:
  void wake(const std::string& key);

  std::map<std::string, std::string, std::less<>> entries_;
  std::unordered_map<std::string, std::vector<std::pair<uint64_t, Waiter>>> waiters_;
  std::unordered_map<uint64_t, std::string> waiter_keys_;
  uint64_t next_token_ = 1;
};

}  // namespace spmd
