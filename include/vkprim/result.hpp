// vkprim/result.hpp — status codes and Result<T>: no exception crosses the vkprim API.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <vulkan/vulkan_core.h>

namespace vkprim {

enum class Status { success, invalid_argument, unsupported, out_of_memory, device_lost, vulkan_error };

// Stable lower-case name of a status ("invalid_argument", ...). Never returns null.
const char* to_string(Status status);

// What went wrong and why. vk_result is VK_SUCCESS unless a Vulkan call failed.
struct Error {
  Status status = Status::success;
  VkResult vk_result = VK_SUCCESS;
  std::string message;
};

namespace detail {
// value() of a failed Result, or error() of a successful one: a programming error. Prints what was asked
// and, for a failure, its status and message to stderr, then aborts (in every build type).
[[noreturn]] inline void result_misused(const char* call, const Error* error) noexcept {
  if (error)
    std::fprintf(stderr, "vkprim: Result::%s() called on a failed Result (%s): %s\n", call, to_string(error->status),
                 error->message.c_str());
  else
    std::fprintf(stderr, "vkprim: Result::%s() called on a successful Result\n", call);
  std::abort();
}
}  // namespace detail

// Either a T or an Error. value() (and -> and *) on an error, or error() on a value, is a programming error
// that aborts with the error's message in every build type; check ok() or operator bool first.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return *checked_value("value"); }
  const T& value() const& { return *checked_value("value"); }
  T&& value() && { return std::move(*checked_value("value")); }
  T* operator->() { return checked_value("operator->"); }
  const T* operator->() const { return checked_value("operator->"); }
  T& operator*() & { return *checked_value("operator*"); }

  const Error& error() const& { return *checked_error(); }
  Error&& error() && { return std::move(*checked_error()); }
  Status status() const noexcept { return ok() ? Status::success : std::get_if<1>(&storage_)->status; }

 private:
  T* checked_value(const char* call) {
    if (T* v = std::get_if<0>(&storage_)) return v;
    detail::result_misused(call, std::get_if<1>(&storage_));
  }
  const T* checked_value(const char* call) const {
    if (const T* v = std::get_if<0>(&storage_)) return v;
    detail::result_misused(call, std::get_if<1>(&storage_));
  }
  Error* checked_error() {
    if (Error* e = std::get_if<1>(&storage_)) return e;
    detail::result_misused("error", nullptr);
  }
  const Error* checked_error() const {
    if (const Error* e = std::get_if<1>(&storage_)) return e;
    detail::result_misused("error", nullptr);
  }

  std::variant<T, Error> storage_;
};

// Result<void>: what calls the contract lists as returning `Status` return. It compares equal to a
// Status value (`r == Status::success`) and keeps the message of a failure.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const noexcept { return error_.status == Status::success; }
  explicit operator bool() const noexcept { return ok(); }
  Status status() const noexcept { return error_.status; }
  const Error& error() const noexcept { return error_; }
  const std::string& message() const noexcept { return error_.message; }
  friend bool operator==(const Result& r, Status s) noexcept { return r.error_.status == s; }
  friend bool operator!=(const Result& r, Status s) noexcept { return r.error_.status != s; }

 private:
  Error error_{};
};

}  // namespace vkprim
