// Per-instance and per-device Vulkan function tables, loaded from the caller's vkGetInstanceProcAddr.
// vkprim never calls the loader's exported symbols, so it coexists with volk and VK_NO_PROTOTYPES engines.
#pragma once

#include <vulkan/vulkan_core.h>

namespace vkprim::detail {

#define VKPRIM_INSTANCE_FUNCTIONS(X)              \
  X(vkGetDeviceProcAddr)                          \
  X(vkGetPhysicalDeviceProperties)                \
  X(vkGetPhysicalDeviceProperties2)               \
  X(vkGetPhysicalDeviceFeatures2)                 \
  X(vkGetPhysicalDeviceMemoryProperties)          \
  X(vkGetPhysicalDeviceQueueFamilyProperties)     \
  X(vkEnumerateDeviceExtensionProperties)

#define VKPRIM_DEVICE_FUNCTIONS(X)                \
  X(vkCreateShaderModule)                         \
  X(vkDestroyShaderModule)                        \
  X(vkCreateComputePipelines)                     \
  X(vkDestroyPipeline)                            \
  X(vkCreatePipelineLayout)                       \
  X(vkDestroyPipelineLayout)                      \
  X(vkCreateDescriptorSetLayout)                  \
  X(vkDestroyDescriptorSetLayout)                 \
  X(vkCreateDescriptorPool)                       \
  X(vkDestroyDescriptorPool)                      \
  X(vkResetDescriptorPool)                        \
  X(vkAllocateDescriptorSets)                     \
  X(vkUpdateDescriptorSets)                       \
  X(vkCreatePipelineCache)                        \
  X(vkDestroyPipelineCache)                       \
  X(vkGetPipelineCacheData)                       \
  X(vkCmdBindPipeline)                            \
  X(vkCmdBindDescriptorSets)                      \
  X(vkCmdPushConstants)                           \
  X(vkCmdDispatch)                                \
  X(vkCmdDispatchIndirect)                        \
  X(vkCmdPipelineBarrier)                         \
  X(vkCmdFillBuffer)                              \
  X(vkCmdCopyBuffer)                              \
  X(vkCmdWriteTimestamp)                          \
  X(vkCmdResetQueryPool)                          \
  X(vkCreateQueryPool)                            \
  X(vkDestroyQueryPool)                           \
  X(vkGetQueryPoolResults)

// Optional device functions (extensions or newer core versions); null when unavailable.
#define VKPRIM_OPTIONAL_DEVICE_FUNCTIONS(X)       \
  X(vkCmdPushDescriptorSetKHR)                    \
  X(vkCmdPipelineBarrier2)                        \
  X(vkCmdPipelineBarrier2KHR)                     \
  X(vkGetPipelineExecutablePropertiesKHR)         \
  X(vkGetPipelineExecutableStatisticsKHR)

#define VKPRIM_OPTIONAL_INSTANCE_FUNCTIONS(X)     \
  X(vkCmdBeginDebugUtilsLabelEXT)                 \
  X(vkCmdEndDebugUtilsLabelEXT)

#define VKPRIM_DECLARE_PFN(name) PFN_##name name = nullptr;

struct InstanceFunctions {
  VKPRIM_INSTANCE_FUNCTIONS(VKPRIM_DECLARE_PFN)
  VKPRIM_OPTIONAL_INSTANCE_FUNCTIONS(VKPRIM_DECLARE_PFN)
  // Loads every function; returns the name of the first required one missing, or nullptr.
  const char* load(PFN_vkGetInstanceProcAddr gipa, VkInstance instance);
};

struct DeviceFunctions {
  VKPRIM_DEVICE_FUNCTIONS(VKPRIM_DECLARE_PFN)
  VKPRIM_OPTIONAL_DEVICE_FUNCTIONS(VKPRIM_DECLARE_PFN)
  const char* load(PFN_vkGetDeviceProcAddr gdpa, VkDevice device);
};

}  // namespace vkprim::detail
