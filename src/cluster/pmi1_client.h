// A PMI-1 client over the socket a PMI-1 launcher (MPICH's Hydra, Slurm's mpi/pmi2 in PMI-1
// mode) hands each process in PMI_FD. The wire protocol is lines of "cmd=NAME key=value ...".
// Used once per process, to agree on the coordinator address through the launcher's
// key-value space. Not thread-safe; every read has a deadline.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace spmd {

class Pmi1Client {
 public:
  // Talks over `fd` (not closed here: it belongs to the launcher's protocol). Every command
  // waits for its answer until `deadline`.
  Pmi1Client(int fd, std::chrono::steady_clock::time_point deadline);

  // Rank 0 puts `value` under `key`, every rank passes the launcher's barrier, then every rank
  // gets rank 0's value; ends with PMI finalize. Every rank of the job must call it.
  std::string exchange_from_rank0(int rank, const std::string& key, const std::string& value);

  // One command and its answer's fields ("cmd" included). Throws spmd::Error when the launcher
  // answers with rc != 0 or something unparsable, DeadlineExceeded when it does not answer.
  std::map<std::string, std::string> command(const std::string& line,
                                             const std::string& expected_cmd);

 private:
  std::string read_line();

  int fd_;
  std::chrono::steady_clock::time_point deadline_;
  std::string buffer_;
};

// The fields of one PMI-1 line: "cmd=get_result rc=0 value=x" -> {cmd: get_result, rc: 0, ...}.
// Throws spmd::Error for a token without '='.
std::map<std::string, std::string> parse_pmi1_line(const std::string& line);

}  // namespace spmd
