// Building vkprim::Error values with readable messages.
#pragma once

#include <sstream>
#include <string>
#include <utility>

#include <vulkan/vulkan_core.h>

#include "vkprim/result.hpp"

namespace vkprim::detail {

template <class... Parts>
Error make_error(Status status, Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return Error{status, VK_SUCCESS, out.str()};
}

template <class... Parts>
Error vk_error(VkResult result, Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  out << " failed (VkResult " << static_cast<int>(result) << ")";
  Status status = Status::vulkan_error;
  if (result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY) status = Status::out_of_memory;
  if (result == VK_ERROR_DEVICE_LOST) status = Status::device_lost;
  return Error{status, result, out.str()};
}

// Why a caller's range of `size` bytes cannot serve a call that needs `bytes` of it (empty when it can).
// Sizes are never guessed: VK_WHOLE_SIZE is refused, since vkprim cannot see the buffer's extent and a
// descriptor or fill sized past it corrupts memory; size 0 is BufferRange's default.
inline std::string range_size_problem(VkDeviceSize size, VkDeviceSize bytes) {
  std::ostringstream out;
  if (size == VK_WHOLE_SIZE)
    out << "range size is VK_WHOLE_SIZE, which vkprim cannot check against the buffer: give the size in bytes ("
        << bytes << " needed)";
  else if (size < bytes)
    out << "range holds " << size << " bytes; " << bytes << " are needed"
        << (size == 0 ? " (size 0 is BufferRange's default: give the range's size)" : "");
  return out.str();
}

}  // namespace vkprim::detail
