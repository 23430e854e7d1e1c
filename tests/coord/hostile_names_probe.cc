// Names that are not text, across the processes of a job (run under spmdrun -n 2): a key,
// prefix or barrier id that is not UTF-8 is InvalidArgument naming the call, before anything is
// sent, and the job goes on (a later barrier completes); a key full of control characters is
// text and round-trips; a value is bytes, any bytes. Before, such a name reached the service,
// which could not decode the message and declared the sender dead: every process exited.
// Prints "[rank] ok hostile names" when every check passed on this process.
#include <chrono>
#include <cstdio>
#include <string>

#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

using namespace spmd;
using std::chrono::milliseconds;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

template <class F>
void refused(F&& call, const std::string& says) {
  try {
    call();
    expect(false, "accepted: " + says);
  } catch (const InvalidArgument& e) {
    expect(std::string(e.what()).find(says) != std::string::npos,
           std::string("message: ") + e.what());
  }
}

}  // namespace

int main() {
  distributed::initialize();
  distributed::Client& client = distributed::client();
  const std::string me = std::to_string(process_index());
  refused([&] { client.key_value_set("bad\xff" + me, "v"); },
          "key_value_set: the key is not valid UTF-8 (byte 0xff at offset 3");
  refused([&] { client.key_value_try_get("\xc0\xaf"); }, "key_value_try_get: the key");
  refused([&] { client.key_value_dir_get("dir\xed\xa0\x80"); }, "key_value_dir_get: the prefix");
  refused([&] { client.wait_at_barrier("b\xfe", milliseconds(1000)); },
          "wait_at_barrier: the barrier id is not valid UTF-8");
  const std::string title = "\x1b]0;title\x07\x1b[2J\n      9  dead " + me;
  const std::string bytes("\xff\x00\x1b", 3);
  client.key_value_set(title, bytes);
  expect(client.blocking_key_value_get(title, milliseconds(5000)) == bytes, "control characters");
  client.wait_at_barrier("after the hostile names", milliseconds(30000));
  if (failures == 0) std::printf("ok hostile names\n");
  distributed::shutdown();
  return failures == 0 ? 0 : 1;
}
