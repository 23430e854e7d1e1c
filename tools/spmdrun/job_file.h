// Where a running spmdrun leaves its job's coordinator address and auth token, so that
// `spmdrun --status`, run by the same user in another shell, can ask the job's coordination
// service for its live view.
//
// The directory is $XDG_RUNTIME_DIR/spmdrun, or /tmp/spmdrun-<uid>, mode 0700 and owned by the
// user (refused otherwise: another user could plant a file there); one file per spmdrun, named
// by its pid, mode 0600, holding the address and the token on a line each. Removed when spmdrun
// exits.
#pragma once

#include <string>
#include <vector>

namespace spmd::tools {

struct RunningJob {
  int pid = 0;  // spmdrun's
  std::string address;
  std::string token;
};

// This spmdrun's file: publish() (re)writes it for each attempt's cluster; the destructor
// removes it. Failures to write are reported on stderr once and otherwise ignored: the job runs
// without a status entry rather than not at all.
class JobFile {
 public:
  JobFile() = default;
  ~JobFile();
  JobFile(const JobFile&) = delete;
  JobFile& operator=(const JobFile&) = delete;

  void publish(const std::string& address, const std::string& token);

 private:
  std::string path_;
};

// The jobs of this user whose spmdrun is still running, by pid; files of spmdruns that are gone
// are removed. Throws std::runtime_error naming the directory when it is unsafe.
std::vector<RunningJob> running_jobs();

}  // namespace spmd::tools
