// Building vkprim::Error values with readable messages.
#pragma once

#include <sstream>
#include <string>
#include <utility>

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

}  // namespace vkprim::detail
