// A non-owning reference to a callable, for callbacks on the data plane's hot path where a
// std::function's allocation would show in small-message latency. The callable must outlive
// the reference.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace spmd {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef() = default;
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>)
      FunctionRef(F& f)  // NOLINT(google-explicit-constructor): used like a function parameter
      : object_(std::addressof(f)), call_([](void* o, Args... args) -> R {
          return (*static_cast<F*>(o))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }
  explicit operator bool() const { return call_ != nullptr; }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace spmd
