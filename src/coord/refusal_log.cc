#include "coord/refusal_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

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
  count_total(host);
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

void RefusalLog::count_total(const std::string& host) {
  auto it = totals_.find(host);
  if (it == totals_.end()) {
    const bool room = totals_.size() < kMaxSources - 1;  // one kept for "other hosts"
    it = totals_.try_emplace(room ? host : std::string(kOtherHosts), 0).first;
  }
  ++it->second;
}

std::string RefusalLog::by_host(size_t max_hosts) const {
  std::vector<std::pair<uint64_t, std::string>> hosts;
  hosts.reserve(totals_.size());
  for (const auto& [host, count] : totals_) hosts.emplace_back(count, host);
  std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out;
  uint64_t rest = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (i < max_hosts) {
      out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", hosts[i].second, hosts[i].first);
    } else {
      rest += hosts[i].first;
    }
  }
  if (hosts.size() > max_hosts) {
    const size_t more = hosts.size() - max_hosts;
    out += fmt::format(" and {} from {} more host{}", rest, more, more == 1 ? "" : "s");
  }
  return out;
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
