#include "spmd-bench/sim_service.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "common/line_channel.h"
#include "coord/open_file_limit.h"
#include "coord/service.h"

namespace spmd::bench {

namespace {

std::string stats_line(const CoordService& service) {
  const auto s = service.stats();
  return "stats " + std::to_string(s.barrier_arrivals) + " " + std::to_string(s.shutdown_arrivals) +
         " " + std::to_string(s.deaths) + " " + std::to_string(s.dropped_connections);
}

}  // namespace

int run_sim_service(const SimServiceOptions& options) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("sim-service"));
  spdlog::set_level(spdlog::level::warn);
  ServiceOptions so;
  so.num_processes = options.num_processes;
  so.bind_address = "127.0.0.1:0";
  so.heartbeat_timeout = std::chrono::milliseconds(options.heartbeat_timeout_ms);
  if (options.status_page) so.status_http_address = "127.0.0.1:0";
  CoordService service(so);
  service.start();
  tools::LineChannel channel(STDIN_FILENO, STDOUT_FILENO, false);
  // status_url() is "http://127.0.0.1:PORT/": its port.
  const std::string url = service.status_url();
  const std::string page_port =
      url.empty() ? "0" : url.substr(url.rfind(':') + 1, url.size() - url.rfind(':') - 2);
  channel.write_line("ready " + std::to_string(service.port()) + " " + page_port);
  while (true) {
    const auto line = channel.read_line(std::chrono::hours(24));
    if (!line) break;
    std::istringstream in(*line);
    std::string id;
    std::string verb;
    in >> id >> verb;
    if (verb == "stats") {
      channel.write_line(id + " " + stats_line(service));
    } else if (verb == "quit") {
      break;
    } else {
      channel.write_line(id + " error unknown command: " + *line);
    }
  }
  service.stop();
  return 0;
}

}  // namespace spmd::bench
