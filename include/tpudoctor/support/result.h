// Result<T>: a value or an Error, for operations that can fail because of their input
// (a missing file, bytes that are not a model, a bad flag).
//
// Problems found *in* a model are Diagnostics, not Errors: a Result error means the tool could
// not do its job at all. The library never throws across its API; it returns a Result instead.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace tpudoctor {

// One line, lower-case, saying what went wrong, where and what was expected.
struct Error {
  std::string message;
};

// The value of a Result that has nothing to return but success.
struct Ok {};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

inline Error MakeError(std::string message) { return Error{std::move(message)}; }

}  // namespace tpudoctor
