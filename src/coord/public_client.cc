// spmd::distributed::Client: the public face of CoordClient.
#include <fmt/format.h>

#include "coord/coord_client.h"
#include "coord/utf8.h"
#include "spmd/coordination_client.h"
#include "spmd/error.h"

namespace spmd::distributed {

using std::chrono::milliseconds;

namespace {
// Keys, barrier ids and prefixes are protobuf strings: text the service must be able to decode.
// Refused here, naming the call, rather than sent and taken for a broken process there.
void check_text(const std::string& text, const char* call, const char* what) {
  if (const size_t at = invalid_utf8_at(text); at != std::string::npos) {
    throw InvalidArgument(fmt::format(
        "{}: the {} is not valid UTF-8 (byte 0x{:02x} at offset {} of {}); keys, prefixes and "
        "barrier ids are text: encode binary names first (as hex, say)",
        call, what, static_cast<unsigned char>(text[at]), at, text.size()));
  }
}
void check_key(const std::string& key, const char* call) {
  if (key.empty()) throw InvalidArgument("a key-value key must not be empty");
  check_text(key, call, "key");
}
void check_timeout(milliseconds timeout, const char* call) {
  if (timeout.count() < 0) {
    throw InvalidArgument(
        fmt::format("{}: timeout must not be negative, got {} ms", call, timeout.count()));
  }
}
}  // namespace

Client::Client(std::shared_ptr<CoordClient> impl) : impl_(std::move(impl)) {}

void Client::key_value_set(const std::string& key, const std::string& value, bool allow_overwrite) {
  check_key(key, "key_value_set");
  wire::ClientMessage msg;
  auto* req = msg.mutable_kv_set();
  req->set_key(key);
  req->set_value(value);
  req->set_allow_overwrite(allow_overwrite);
  impl_->call(std::move(msg), milliseconds(0));
}

std::string Client::blocking_key_value_get(const std::string& key, milliseconds timeout) {
  check_key(key, "blocking_key_value_get");
  check_timeout(timeout, "blocking_key_value_get");
  wire::ClientMessage msg;
  auto* req = msg.mutable_kv_get();
  req->set_key(key);
  req->set_blocking(true);
  req->set_timeout_ms(timeout.count());
  auto answer = impl_->call(std::move(msg), timeout);
  return answer.value();
}

std::optional<std::string> Client::key_value_try_get(const std::string& key) {
  check_key(key, "key_value_try_get");
  wire::ClientMessage msg;
  msg.mutable_kv_get()->set_key(key);
  auto answer = impl_->call(std::move(msg), milliseconds(0));
  if (answer.body_case() != wire::ServerMessage::kValue) return std::nullopt;
  return answer.value();
}

std::vector<std::pair<std::string, std::string>> Client::key_value_dir_get(
    const std::string& prefix) {
  check_text(prefix, "key_value_dir_get", "prefix");
  wire::ClientMessage msg;
  msg.mutable_kv_dir_get()->set_prefix(prefix);
  auto answer = impl_->call(std::move(msg), milliseconds(0));
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : answer.entries().entries()) out.emplace_back(e.key(), e.value());
  return out;
}

void Client::key_value_delete(const std::string& key) {
  check_key(key, "key_value_delete");
  wire::ClientMessage msg;
  msg.mutable_kv_delete()->set_key(key);
  impl_->call(std::move(msg), milliseconds(0));
}

int64_t Client::key_value_increment(const std::string& key, int64_t delta) {
  check_key(key, "key_value_increment");
  wire::ClientMessage msg;
  auto* req = msg.mutable_kv_increment();
  req->set_key(key);
  req->set_delta(delta);
  return impl_->call(std::move(msg), milliseconds(0)).counter();
}

void Client::wait_at_barrier(const std::string& id, milliseconds timeout,
                             const std::vector<int>& process_ids) {
  if (id.empty()) throw InvalidArgument("a barrier id must not be empty");
  check_text(id, "wait_at_barrier", "barrier id");
  check_timeout(timeout, "wait_at_barrier");
  wire::ClientMessage msg;
  auto* req = msg.mutable_barrier();
  req->set_id(id);
  req->set_timeout_ms(timeout.count());
  for (int p : process_ids) req->add_process_ids(p);
  impl_->call(std::move(msg), timeout);
}

std::vector<int> Client::get_live_processes() {
  wire::ClientMessage msg;
  msg.mutable_live_processes();
  auto answer = impl_->call(std::move(msg), milliseconds(0));
  return {answer.live().process_ids().begin(), answer.live().process_ids().end()};
}

}  // namespace spmd::distributed
