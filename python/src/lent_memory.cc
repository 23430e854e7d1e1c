// NumPy memory lent to spmd (host_view, bindings.h): a HostArray views a NumPy array's bytes and
// holds a reference to it. The last HostArray viewing them may die on a thread without the GIL
// (a device worker, a checkpoint's writer). Taking the GIL there could deadlock against a Python
// thread that holds it and waits for that thread, so, as XLA's Python reference manager does,
// such a release is queued and done by the next thread to lend memory (which holds the GIL).
#include <Python.h>

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "bindings.h"

namespace spmd::python {
namespace {

struct Deferred {
  std::mutex mu;
  std::vector<HostBytes*> released;
};

Deferred& deferred() {
  static auto* d = new Deferred;  // kept for the process's life: releases may come at exit
  return *d;
}

void release(const void* p) {
  auto* lent = static_cast<HostBytes*>(const_cast<void*>(p));
  if (PyGILState_Check() != 0) {
    delete lent;
    return;
  }
  std::lock_guard lock(deferred().mu);
  deferred().released.push_back(lent);
}

// Releases what other threads queued; the caller holds the GIL.
void release_deferred() {
  std::vector<HostBytes*> due;
  {
    std::lock_guard lock(deferred().mu);
    due.swap(deferred().released);
  }
  for (HostBytes* lent : due) delete lent;
}

}  // namespace

HostArray host_view(const HostBytes& bytes, const Shape& shape, const std::string& dtype) {
  release_deferred();
  const std::span<const std::byte> viewed(reinterpret_cast<const std::byte*>(bytes.data()),
                                          bytes.size());
  std::shared_ptr<const void> lender(new HostBytes(bytes), &release);
  return HostArray::borrow(dtype_named(dtype), shape, viewed, std::move(lender));
}

}  // namespace spmd::python
