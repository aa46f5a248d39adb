#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace crank {

/// What kind of failure an Error reports. Callers branch on the code; people read the message.
enum class ErrorCode {
    invalid_argument,  ///< the caller passed something malformed or out of range
    not_found,         ///< the thing asked for does not exist
    conflict,          ///< the thing exists already, or its state is not the one expected
    unavailable,       ///< a dependency (store, upstream, port) cannot be used right now
    io,                ///< reading or writing a file or socket failed
    internal,          ///< a bug or an unexpected condition inside Crank
};

/// Name of an ErrorCode as used in logs and JSON ("invalid_argument", ...).
std::string_view errorCodeName(ErrorCode code);

/// An error as a value: a code for programs and a message for people. The message says what is
/// wrong and, where it can, what to do about it. It never contains secrets.
struct Error {
    ErrorCode code = ErrorCode::internal;
    std::string message;
};

/// Either a value or an Error. Crank's layers return these instead of throwing across layers.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(state_); }

private:
    std::variant<T, Error> state_;
};

/// Result of an operation that yields nothing but can fail.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    // NOLINTNEXTLINE(google-explicit-constructor): returning an Error must read naturally.
    Result(Error error) : error_(std::move(error)), ok_(false) {}

    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const { return error_; }

private:
    Error error_;
    bool ok_ = true;
};

}  // namespace crank
