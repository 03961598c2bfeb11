// Errors as values across library boundaries (std::expected is C++23; g++ 12 lacks it).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "core/error_codes.h"

namespace attrib {

struct Error {
  std::string code;     // stable, one of core/error_codes.h, e.g. "RULE_E_REGEX"
  std::string message;  // human-readable, names file:line and field where known
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace attrib
