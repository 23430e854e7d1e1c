#include "checkpoint/mapped_copy.h"

#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>

namespace spmd::checkpoint {
namespace {

// Pieces small enough to stay in L2 between the hash reading them and the copy.
constexpr size_t kPiece = size_t{256} << 10;

// Where this thread's copy_mapped() resumes after a SIGBUS; null outside one.
thread_local sigjmp_buf* t_resume = nullptr;

struct sigaction g_previous {};
std::once_flag g_installed;

// Ours: back into copy_mapped(). Anyone else's: the previous disposition.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (t_resume != nullptr) siglongjmp(*t_resume, 1);
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler == SIG_IGN) return;
  if (g_previous.sa_handler == SIG_DFL) {
    // The default kills the process: restore it; returning re-runs the faulting access.
    ::signal(SIGBUS, SIG_DFL);
    return;
  }
  g_previous.sa_handler(sig);
}

void install() {
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous);
}

// The loop itself: C calls only, nothing to destroy if a SIGBUS leaves it by siglongjmp.
void copy_pieces(const std::byte* mapped, std::byte* out, size_t n, XXH3_state_t* hash) {
  for (size_t done = 0; done < n; done += kPiece) {
    const size_t len = n - done < kPiece ? n - done : kPiece;
    XXH3_64bits_update(hash, mapped + done, len);
    std::memcpy(out + done, mapped + done, len);
  }
}

}  // namespace

bool copy_mapped(const std::byte* mapped, std::byte* out, size_t n, XXH3_state_t* hash) {
  std::call_once(g_installed, install);
  sigjmp_buf resume;
  if (sigsetjmp(resume, 1) != 0) {
    t_resume = nullptr;
    return false;
  }
  t_resume = &resume;
  copy_pieces(mapped, out, n, hash);
  t_resume = nullptr;
  return true;
}

}  // namespace spmd::checkpoint
