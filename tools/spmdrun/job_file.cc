#include "spmdrun/job_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace spmd::tools {
namespace {

std::string directory() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] != '\0') return std::string(runtime) + "/spmdrun";
  return "/tmp/spmdrun-" + std::to_string(::getuid());
}

// Creates the directory if needed and checks that only this user can write into it.
std::string safe_directory() {
  std::string dir = directory();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
      (st.st_mode & 0077) != 0) {
    throw std::runtime_error(dir + " is not a directory of this user's with mode 0700; remove it");
  }
  return dir;
}

bool alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

JobFile::~JobFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

void JobFile::publish(const std::string& address, const std::string& token) {
  try {
    const std::string path = safe_directory() + "/" + std::to_string(::getpid());
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    const std::string line = address + "\n" + token + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + path);
    }
    path_ = path;
  } catch (const std::exception& e) {
    if (path_.empty()) {
      std::fprintf(stderr, "spmdrun: spmdrun --status will not find this job: %s\n", e.what());
    }
  }
}

std::vector<RunningJob> running_jobs() {
  const std::string dir = safe_directory();
  std::vector<RunningJob> jobs;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return jobs;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;  // ".", "..", "*.tmp"
    const std::string path = dir + "/" + e->d_name;
    if (!alive(static_cast<int>(pid))) {
      ::unlink(path.c_str());
      continue;
    }
    RunningJob job;
    job.pid = static_cast<int>(pid);
    std::ifstream in(path);
    if (std::getline(in, job.address) && std::getline(in, job.token)) jobs.push_back(job);
  }
  ::closedir(d);
  return jobs;
}

}  // namespace spmd::tools
