#include "common/commanded_child.h"

#include <signal.h>

#include <sstream>
#include <stdexcept>

#include "common/subprocess.h"

namespace spmd::tools {

std::vector<std::string> split_fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

CommandedChild::CommandedChild(std::string name, const std::vector<std::string>& argv)
    : name_(std::move(name)) {
  // A helper that died must be an error on the next command, not a SIGPIPE that kills the
  // driver; the programs that drive helpers write to no other pipe whose loss should kill them.
  signal(SIGPIPE, SIG_IGN);
  SpawnOptions so;
  so.argv = argv;
  so.pipe_input = true;
  so.pipe_output = true;
  so.inherit_stderr = true;  // the helper's logs go where ours go
  Child child = spawn(so);
  pid_ = child.pid;
  channel_ = std::make_unique<LineChannel>(child.out_fd, child.in_fd, true);
}

CommandedChild::~CommandedChild() {
  if (!reaped_) kill_now();
}

std::string CommandedChild::send(const std::string& command) {
  std::string id = std::to_string(next_id_++);
  if (!channel_->write_line(id + " " + command)) {
    throw std::runtime_error(name_ + " is gone (cannot send '" + command + "')");
  }
  return id;
}

std::vector<std::string> CommandedChild::await(const std::string& id,
                                               std::chrono::milliseconds timeout) {
  return expect(id, timeout);
}

std::vector<std::string> CommandedChild::expect(const std::string& first_field,
                                                std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto it = early_.find(first_field); it != early_.end()) {
      auto fields = std::move(it->second);
      early_.erase(it);
      if (!fields.empty() && fields[0] == "error") {
        std::string what = name_ + " failed:";
        for (size_t i = 1; i < fields.size(); ++i) what += " " + fields[i];
        throw std::runtime_error(what);
      }
      return fields;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const auto line = channel_->read_line(std::max(left, std::chrono::milliseconds(0)));
    if (!line) {
      throw std::runtime_error(name_ + " (pid " + std::to_string(pid_) + ") did not answer '" +
                               first_field + "' within " + std::to_string(timeout.count()) +
                               " ms, or exited");
    }
    auto fields = split_fields(*line);
    if (fields.empty()) continue;
    std::string key = fields[0];
    fields.erase(fields.begin());
    early_[key] = std::move(fields);
  }
}

void CommandedChild::kill_now() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  wait_or_kill(pid_, std::chrono::seconds(10));
  reaped_ = true;
}

bool CommandedChild::quit(std::chrono::milliseconds timeout) {
  if (reaped_) return false;
  send("quit");
  const auto status = wait_or_kill(pid_, timeout);
  reaped_ = true;
  return status && !status->signaled && status->code == 0;
}

}  // namespace spmd::tools
