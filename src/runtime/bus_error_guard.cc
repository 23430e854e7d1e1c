#include "runtime/bus_error_guard.h"

#include <csetjmp>
#include <csignal>
#include <mutex>

namespace spmd {
namespace {

// Where this thread's innermost guard resumes after a SIGBUS; null outside one.
thread_local sigjmp_buf* t_resume = nullptr;

struct sigaction g_previous_bus_handler {};
std::once_flag g_installed;

// Ours: back into the guard. Anyone else's: the previous disposition.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (t_resume != nullptr) siglongjmp(*t_resume, 1);
  if ((g_previous_bus_handler.sa_flags & SA_SIGINFO) != 0 &&
      g_previous_bus_handler.sa_sigaction != nullptr) {
    g_previous_bus_handler.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous_bus_handler.sa_handler == SIG_IGN) return;
  if (g_previous_bus_handler.sa_handler == SIG_DFL) {
    // The default kills the process: restore it; returning re-runs the faulting access.
    ::signal(SIGBUS, SIG_DFL);
    return;
  }
  g_previous_bus_handler.sa_handler(sig);
}

void install() {
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous_bus_handler);
}

}  // namespace

bool run_catching_bus_errors(void (*body)(void* context), void* context) {
  std::call_once(g_installed, install);
  sigjmp_buf* const outer = t_resume;
  sigjmp_buf resume;
  if (sigsetjmp(resume, 1) != 0) {
    t_resume = outer;
    return false;
  }
  t_resume = &resume;
  try {
    body(context);
  } catch (...) {
    t_resume = outer;
    throw;
  }
  t_resume = outer;
  return true;
}

}  // namespace spmd
