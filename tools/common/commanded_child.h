// A helper process driven by line commands (line_channel.h): started with its stdin and stdout
// as pipes, sent "<id> <command>", answered "<id> <fields…>" in any order. spmd-bench's
// simulated cluster and the tests that use it drive their helpers through this.
//
// Every wait has a deadline; a helper that dies, hangs or answers "error …" becomes a
// std::runtime_error naming the helper. The destructor kills (by pid) and reaps a helper that
// still runs. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/line_channel.h"

namespace spmd::tools {

class CommandedChild {
 public:
  // Starts argv (argv[0] looked up in PATH); stderr is inherited. `name` is for messages.
  CommandedChild(std::string name, const std::vector<std::string>& argv);
  ~CommandedChild();
  CommandedChild(const CommandedChild&) = delete;
  CommandedChild& operator=(const CommandedChild&) = delete;

  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }

  // Sends "<id> <command>" and returns the id.
  std::string send(const std::string& command);
  // The fields of the answer to `id` (after the id). Throws when it does not come within
  // `timeout` or says "error".
  std::vector<std::string> await(const std::string& id, std::chrono::milliseconds timeout);
  std::vector<std::string> call(const std::string& command, std::chrono::milliseconds timeout) {
    return await(send(command), timeout);
  }
  // The fields of a line the helper writes of its own accord (such as "ready …"), by its first
  // field. Throws like await().
  std::vector<std::string> expect(const std::string& first_field,
                                  std::chrono::milliseconds timeout);

  // SIGKILL now, and reap.
  void kill_now();
  // Sends "quit" and waits up to `timeout` for the exit; kills it after that. Returns whether it
  // exited with code 0 by itself.
  bool quit(std::chrono::milliseconds timeout);

 private:
  std::string name_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::unique_ptr<LineChannel> channel_;
  uint64_t next_id_ = 1;
  std::map<std::string, std::vector<std::string>> early_;  // answers that came before asked
};

// Splits a line at spaces.
std::vector<std::string> split_fields(const std::string& line);

}  // namespace spmd::tools
