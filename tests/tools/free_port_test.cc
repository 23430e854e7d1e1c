// tools::free_port (tools/common/subprocess.h): a port it hands out is reserved for the calling
// process's life, so another process's free_port() never hands out the same one while this one
// lives, and the reservation goes when the process does.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "common/subprocess.h"

namespace {

// free_port() `count` times in a child process; the ports it got, read back through a pipe.
std::set<int> ports_of_a_child(int count) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    for (int i = 0; i < count; ++i) {
      const std::string line = std::to_string(spmd::tools::free_port()) + "\n";
      if (::write(fds[1], line.data(), line.size()) < 0) ::_exit(2);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::set<int> ports;
  FILE* in = ::fdopen(fds[0], "r");
  int port = 0;
  while (std::fscanf(in, "%d", &port) == 1) ports.insert(port);
  std::fclose(in);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return ports;
}

TEST(FreePort, APortHandedOutIsNotHandedToAnotherProcessWhileItsHolderLives) {
  std::set<int> mine;
  for (int i = 0; i < 300; ++i) mine.insert(spmd::tools::free_port());
  EXPECT_EQ(mine.size(), 300u) << "one process was handed a port twice";
  // 300 of about 22,800 ports held: without the reservation, 900 picks by another process would
  // meet one of them about 12 times. (Each reservation holds a descriptor: counts stay well
  // under the usual limit of 1024.)
  const std::set<int> theirs = ports_of_a_child(900);
  EXPECT_EQ(theirs.size(), 900u);
  int shared = 0;
  for (int p : theirs) shared += mine.count(p) != 0 ? 1 : 0;
  EXPECT_EQ(shared, 0) << "ports handed to a second process while the first held them";
}

TEST(FreePort, TheReservationEndsWithTheProcess) {
  const std::set<int> first = ports_of_a_child(900);
  ASSERT_EQ(first.size(), 900u);
  // The child is gone: its 900 ports are free again, and a second child's 900 picks meet about
  // 35 of them.
  const std::set<int> second = ports_of_a_child(900);
  int again = 0;
  for (int p : second) again += first.count(p) != 0 ? 1 : 0;
  EXPECT_GT(again, 0) << "a dead process's reservations were kept";
}

}  // namespace
