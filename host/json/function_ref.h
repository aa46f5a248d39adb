#pragma once

#include <type_traits>
#include <utility>

namespace crank::json {

template <typename Signature>
class FunctionRef;

/// A non-owning reference to a callable, for callbacks that are only called during the call that
/// receives them (no allocation, unlike std::function). The callable must outlive the FunctionRef.
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
public:
    template <typename F,
              typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
    // NOLINTNEXTLINE(google-explicit-constructor): passing a lambda must read naturally.
    FunctionRef(F&& callable)
        : object_(const_cast<void*>(static_cast<const void*>(&callable))),
          call_([](void* object, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(object))(
                  std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*call_)(void*, Args...);
};

}  // namespace crank::json
