// Viewers of the status page (coord/status_http.h) for spmd-bench coordinator: each asks for
// status.json over plain HTTP, reads the whole answer, and asks again a second after it arrived,
// as the page's script does, until stopped.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace spmd::bench {

class StatusViewers {
 public:
  // `count` viewers of the page at 127.0.0.1:`port`.
  StatusViewers(int port, int count);
  ~StatusViewers();
  StatusViewers(const StatusViewers&) = delete;
  StatusViewers& operator=(const StatusViewers&) = delete;

  struct Seen {
    std::vector<double> wait_ms;  // from each request to its whole answer
    std::string last_json;        // the last answer's body
    int failures = 0;             // requests that got no 200
  };
  // Stops every viewer (each finishes its request in flight) and says what they saw.
  Seen stop();

 private:
  void view(int port);

  std::atomic<bool> stop_{false};
  std::mutex mu_;
  Seen seen_;
  std::vector<std::thread> threads_;
};

}  // namespace spmd::bench
