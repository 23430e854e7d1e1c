#include "coord/refusal_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iterator>

namespace spmd {

namespace {

constexpr std::string_view kOtherHosts = "other hosts";

}  // namespace

std::string peer_host(std::string_view peer) {
  const size_t colon = peer.rfind(':');
  if (colon == std::string_view::npos || peer.find(']', colon) != std::string_view::npos) {
    return std::string(peer);
  }
  return std::string(peer.substr(0, colon));
}

RefusalLog::RefusalLog(std::chrono::seconds interval, Sink sink)
    : interval_(interval),
      sink_(sink ? std::move(sink) : [](const std::string& line) { spdlog::warn("{}", line); }) {}

void RefusalLog::refused(std::string_view peer, std::string_view reason, Clock::time_point now) {
  ++total_;
  std::string host = peer_host(peer);
  if (!sources_.contains(host) && sources_.size() >= kMaxSources) {
    flush(now);  // forgets the hosts whose interval has passed
    if (sources_.size() >= kMaxSources) host = kOtherHosts;
  }
  Source& source = sources_[host];
  if (now < source.window_end) {
    ++source.unlogged;
    source.last_reason = reason;
    return;
  }
  summarize(host, source);
  source.window_end = now + interval_;
  sink_(fmt::format("coordination service: refused a connection from {}: {}", host, reason));
}

void RefusalLog::flush(Clock::time_point now) {
  for (auto it = sources_.begin(); it != sources_.end();) {
    if (now < it->second.window_end) {
      ++it;
      continue;
    }
    summarize(it->first, it->second);
    it = sources_.erase(it);
  }
}

void RefusalLog::summarize(const std::string& host, Source& source) {
  if (source.unlogged == 0) return;
  sink_(fmt::format(
      "coordination service: refused {} more connection{} from {} in the last {} s; the last: {}",
      source.unlogged, source.unlogged == 1 ? "" : "s", host, interval_.count(),
      source.last_reason));
  source.unlogged = 0;
}

}  // namespace spmd
