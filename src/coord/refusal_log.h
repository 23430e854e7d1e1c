// The service's log of refused connections and requests (a wrong token, no registration in time,
// an undecodable first message, a connection beyond those it admits), kept from flooding the
// log: per source host, the first refusal of each interval is logged in full and the rest are
// counted, then summed up in one line ("refused 27803 more connections from 10.0.0.7 in the last
// 10 s; the last: wrong auth token") once the interval has passed, at that host's next refusal
// or at flush(). At most kMaxSources hosts are tracked at once (and as many in the totals since
// the start); beyond them, refusals count under "other hosts". Private to src/coord/; not
// thread-safe (the service's event loop owns it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace spmd {

class RefusalLog {
 public:
  using Clock = std::chrono::steady_clock;
  using Sink = std::function<void(const std::string& line)>;
  static constexpr size_t kMaxSources = 1024;

  // `sink` takes each line (spdlog's warning when empty).
  explicit RefusalLog(std::chrono::seconds interval = std::chrono::seconds(10), Sink sink = {});

  // A refusal of `peer` ("10.0.0.7:51234"; its host is the source) for `reason`.
  void refused(std::string_view peer, std::string_view reason, Clock::time_point now);
  void refused(std::string_view peer, std::string_view reason) {
    refused(peer, reason, Clock::now());
  }
  // Sums up every source whose interval has passed with refusals not yet logged.
  void flush(Clock::time_point now);
  // Refusals seen in all.
  uint64_t total() const { return total_; }
  // Refusals since the start by source host, most first: "127.0.0.1 (1000), 10.0.0.7 (3)". At most
  // `max_hosts` are named; the rest are summed up ("and 5 from 2 more hosts"). Empty when none.
  std::string by_host(size_t max_hosts) const;

 private:
  struct Source {
    Clock::time_point window_end;
    uint64_t unlogged = 0;
    std::string last_reason;
  };

  void summarize(const std::string& host, Source& source);
  void count_total(const std::string& host);

  const std::chrono::seconds interval_;
  const Sink sink_;
  std::map<std::string, Source> sources_;
  std::map<std::string, uint64_t> totals_;  // by host since the start, kMaxSources at most
  uint64_t total_ = 0;
};

// The host part of "host:port" ("[::1]:5" gives "[::1]"); the whole text without a port.
std::string peer_host(std::string_view peer);

}  // namespace spmd
