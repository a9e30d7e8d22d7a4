// vkprim/result.hpp — status codes and Result<T>: no exception crosses the vkprim API.
#pragma once

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

// Either a T or an Error. value() on an error (or error() on a value) is a programming error
// (asserts in debug builds); check ok() or operator bool first.
template <class T>
class Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return *std::get_if<0>(&storage_); }
  const T& value() const& { return *std::get_if<0>(&storage_); }
  T&& value() && { return std::move(*std::get_if<0>(&storage_)); }
  T* operator->() { return std::get_if<0>(&storage_); }
  const T* operator->() const { return std::get_if<0>(&storage_); }
  T& operator*() & { return value(); }

  const Error& error() const& { return *std::get_if<1>(&storage_); }
  Error&& error() && { return std::move(*std::get_if<1>(&storage_)); }
  Status status() const noexcept { return ok() ? Status::success : std::get_if<1>(&storage_)->status; }

 private:
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
