#include "coord/kv_store.h"

#include <charconv>
#include <limits>

namespace spmd {

bool KvStore::set(const std::string& key, std::string value, bool allow_overwrite) {
  auto [it, inserted] = entries_.try_emplace(key);
  if (!inserted && !allow_overwrite) return false;
  it->second = std::move(value);
  wake(key);
  return true;
}

const std::string* KvStore::find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, std::string>> KvStore::dir_get(
    std::string_view directory) const {
  std::string prefix(directory);
  if (prefix.empty() || prefix.back() != '/') prefix.push_back('/');
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && std::string_view(it->first).starts_with(prefix); ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

void KvStore::erase(const std::string& key) {
  entries_.erase(key);
  const std::string prefix = key + "/";
  auto it = entries_.lower_bound(prefix);
  while (it != entries_.end() && std::string_view(it->first).starts_with(prefix)) {
    it = entries_.erase(it);
  }
}

std::variant<int64_t, std::string> KvStore::increment(const std::string& key, int64_t delta) {
  int64_t current = 0;
  if (const std::string* stored = find(key)) {
    const char* begin = stored->data();
    const char* end = begin + stored->size();
    auto [ptr, ec] = std::from_chars(begin, end, current);
    if (ec != std::errc() || ptr != end || stored->empty()) {
      return "key '" + key + "' holds a value that is not a decimal integer";
    }
  }
  if ((delta > 0 && current > std::numeric_limits<int64_t>::max() - delta) ||
      (delta < 0 && current < std::numeric_limits<int64_t>::min() - delta)) {
    return "incrementing key '" + key + "' by " + std::to_string(delta) + " overflows int64";
  }
  current += delta;
  entries_[key] = std::to_string(current);
  wake(key);
  return current;
}

uint64_t KvStore::wait(const std::string& key, Waiter waiter) {
  const uint64_t token = next_token_++;
  waiters_[key].emplace_back(token, std::move(waiter));
  waiter_keys_.emplace(token, key);
  return token;
}

bool KvStore::cancel_wait(uint64_t token) {
  auto key_it = waiter_keys_.find(token);
  if (key_it == waiter_keys_.end()) return false;
  auto list_it = waiters_.find(key_it->second);
  if (list_it != waiters_.end()) {
    auto& list = list_it->second;
    std::erase_if(list, [token](const auto& w) { return w.first == token; });
    if (list.empty()) waiters_.erase(list_it);
  }
  waiter_keys_.erase(key_it);
  return true;
}

void KvStore::wake(const std::string& key) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  auto list = std::move(it->second);
  waiters_.erase(it);
  const std::string value = entries_.at(key);
  for (auto& [token, waiter] : list) {
    waiter_keys_.erase(token);
    waiter(value);
  }
}

}  // namespace spmd
