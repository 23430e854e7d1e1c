#include "cluster/pmi1_client.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "spmd/error.h"

namespace spmd {

using Clock = std::chrono::steady_clock;

namespace {
// A launcher's answer longer than this is not PMI-1.
constexpr size_t kMaxLineBytes = size_t{64} * 1024;
}  // namespace

std::map<std::string, std::string> parse_pmi1_line(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error(fmt::format("the PMI launcher sent an unreadable line: '{}'", line));
    }
    fields[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return fields;
}

Pmi1Client::Pmi1Client(int fd, Clock::time_point deadline) : fd_(fd), deadline_(deadline) {}

std::string Pmi1Client::read_line() {
  while (true) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxLineBytes) throw Error("the PMI launcher sent an overlong line");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    if (left.count() <= 0) {
      throw DeadlineExceeded(
          "the PMI launcher did not answer in time (is every rank of the job running?)");
    }
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error(fmt::format("the PMI launcher closed its socket (PMI_FD={}): {}", fd_,
                              n == 0 ? "end of file" : std::strerror(errno)));
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::map<std::string, std::string> Pmi1Client::command(const std::string& line,
                                                       const std::string& expected_cmd) {
  const std::string out = line + "\n";
  size_t off = 0;
  while (off < out.size()) {
    const ssize_t n = write(fd_, out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error(fmt::format("cannot write to the PMI launcher (PMI_FD={}): {}", fd_,
                              std::strerror(errno)));
    }
    off += static_cast<size_t>(n);
  }
  auto fields = parse_pmi1_line(read_line());
  if (fields["cmd"] != expected_cmd) {
    throw Error(fmt::format("the PMI launcher answered '{}' to '{}', expected '{}'", fields["cmd"],
                            line, expected_cmd));
  }
  if (fields.count("rc") && fields["rc"] != "0") {
    throw Error(fmt::format("the PMI launcher refused '{}': rc={} {}", line, fields["rc"],
                            fields.count("msg") ? fields["msg"] : ""));
  }
  return fields;
}

std::string Pmi1Client::exchange_from_rank0(int rank, const std::string& key,
                                            const std::string& value) {
  command("cmd=init pmi_version=1 pmi_subversion=1", "response_to_init");
  const std::string kvs = command("cmd=get_my_kvsname", "my_kvsname")["kvsname"];
  if (kvs.empty()) throw Error("the PMI launcher gave no key-value space name");
  if (rank == 0)
    command(fmt::format("cmd=put kvsname={} key={} value={}", kvs, key, value), "put_result");
  command("cmd=barrier_in", "barrier_out");
  auto got = command(fmt::format("cmd=get kvsname={} key={}", kvs, key), "get_result");
  command("cmd=finalize", "finalize_ack");
  if (got["value"].empty()) throw Error("the PMI launcher returned an empty value for " + key);
  return got["value"];
}

}  // namespace spmd
