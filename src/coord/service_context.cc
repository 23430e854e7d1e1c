#include "coord/service_context.h"

#include <fmt/format.h>

#include <algorithm>

#include "coord/open_file_limit.h"
#include "coord/wire.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// A day: server-side timeouts asked for by clients are clamped to it.
constexpr int64_t kMaxTimeoutMs = 24LL * 3600 * 1000;

constexpr int kDescriptorMargin = 256;

// Checked before any per-process state is allocated.
ServiceOptions checked(ServiceOptions options) {
  if (options.num_processes < 1) {
    throw InvalidArgument(
        fmt::format("num_processes must be at least 1, got {}", options.num_processes));
  }
  // One descriptor per process, and a margin for the hosting process's own (process 0's
  // shared memory and data-plane sockets).
  raise_open_file_limit(options.num_processes + kDescriptorMargin, "the coordination service");
  return options;
}

}  // namespace

std::chrono::milliseconds clamp_client_timeout(int64_t ms) {
  return std::chrono::milliseconds(std::clamp<int64_t>(ms, 0, kMaxTimeoutMs));
}

ServiceContext::ServiceContext(ServiceOptions options)
    : opts(checked(std::move(options))),
      members(opts.num_processes),
      links(static_cast<size_t>(opts.num_processes)) {}

void ServiceContext::drop(ServiceSession& session, const std::string& reason) {
  if (session.dropped) return;
  session.dropped = true;
  refusals.refused(session.conn->peer(), "dropped: " + reason);
  ++dropped;
  session.conn->reset(reason);
}

void ServiceContext::send(ServiceSession& session, const wire::ServerMessage& msg) {
  session.conn->send(std::make_shared<const std::string>(encode_message_frame(msg)));
}

void ServiceContext::reply(ServiceSession& session, uint64_t request_id, const Status& status) {
  wire::ServerMessage msg;
  msg.set_request_id(request_id);
  msg.set_code(static_cast<wire::Code>(status.code));
  msg.set_message(status.message);
  send(session, msg);
}

void ServiceContext::reply_ok(ServiceSession& session, uint64_t request_id,
                              wire::ServerMessage msg) {
  msg.set_request_id(request_id);
  send(session, msg);
}

void ServiceContext::connection_opened() {
  std::lock_guard lock(mu_);
  ++open_process_connections_;
}

void ServiceContext::connection_gone() {
  std::lock_guard lock(mu_);
  --open_process_connections_;
  cv_.notify_all();
}

void ServiceContext::mark_finished() {
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

bool ServiceContext::wait_until_finished(milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return finished_; });
}

bool ServiceContext::wait_until_disconnected(milliseconds timeout, int still_open) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return open_process_connections_ <= still_open; });
}

}  // namespace spmd
