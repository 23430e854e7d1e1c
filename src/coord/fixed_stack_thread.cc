#include "coord/fixed_stack_thread.h"

#include <fmt/format.h>

#include <cstring>

#include "spmd/error.h"

namespace spmd {

void FixedStackThread::start(std::string name, size_t stack_bytes, std::function<void()> body) {
  if (started_) throw FailedPrecondition(fmt::format("thread '{}' already runs", name_));
  name_ = std::move(name);
  body_ = std::move(body);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, stack_bytes);
  if (rc == 0) rc = pthread_create(&thread_, &attr, &FixedStackThread::run, this);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    throw Error(fmt::format("cannot start thread '{}' with a {} KiB stack: {}", name_,
                            stack_bytes / 1024, std::strerror(rc)));
  }
  started_ = true;
}

void* FixedStackThread::run(void* self) {
  auto* t = static_cast<FixedStackThread*>(self);
  pthread_setname_np(pthread_self(), t->name_.substr(0, 15).c_str());
  t->body_();
  return nullptr;
}

void FixedStackThread::join() {
  if (!started_) return;
  pthread_join(thread_, nullptr);
  started_ = false;
}

}  // namespace spmd
