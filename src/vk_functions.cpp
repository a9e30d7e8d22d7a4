#include "vk_functions.hpp"

namespace vkprim::detail {

const char* InstanceFunctions::load(PFN_vkGetInstanceProcAddr gipa, VkInstance instance) {
#define VKPRIM_LOAD_REQUIRED(name)                                                   \
  name = reinterpret_cast<PFN_##name>(gipa(instance, #name));                        \
  if (!name) return #name;
#define VKPRIM_LOAD_OPTIONAL(name) name = reinterpret_cast<PFN_##name>(gipa(instance, #name));
  VKPRIM_INSTANCE_FUNCTIONS(VKPRIM_LOAD_REQUIRED)
  VKPRIM_OPTIONAL_INSTANCE_FUNCTIONS(VKPRIM_LOAD_OPTIONAL)
  return nullptr;
}

const char* DeviceFunctions::load(PFN_vkGetDeviceProcAddr gdpa, VkDevice device) {
#undef VKPRIM_LOAD_REQUIRED
#undef VKPRIM_LOAD_OPTIONAL
#define VKPRIM_LOAD_REQUIRED(name)                                                   \
  name = reinterpret_cast<PFN_##name>(gdpa(device, #name));                          \
  if (!name) return #name;
#define VKPRIM_LOAD_OPTIONAL(name) name = reinterpret_cast<PFN_##name>(gdpa(device, #name));
  VKPRIM_DEVICE_FUNCTIONS(VKPRIM_LOAD_REQUIRED)
  VKPRIM_OPTIONAL_DEVICE_FUNCTIONS(VKPRIM_LOAD_OPTIONAL)
  return nullptr;
}

}  // namespace vkprim::detail
