// Compute pipelines built from embedded SPIR-V. The context caches them by (kernel, variant, specialization):
// get_kernel in context_impl.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "vk_functions.hpp"
#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim::detail {

struct ShaderGroup;

// A kernel's binding model: `bindings` storage buffers at set 0, bindings 0..n-1, and `push_bytes`
// bytes of push constants, all in the compute stage.
struct KernelDesc {
  const ShaderGroup* group = nullptr;  // the embedded group holding the kernel (shader_groups.hpp)
  std::string kernel;    // "reduce/grid_stride"
  std::string variant;   // "u32", "u32.nosg", "default"
  std::optional<Op> op;  // specialization constant 5, for the kernels that combine with an operator
  uint32_t workgroup_size = 256;
  uint32_t items = 1;
  uint32_t tuning = 0;   // specialization constant 2, kernel-specific; 0 leaves the shader's default
  uint32_t mode = 0;     // specialization constant 3, kernel-specific (sort: the key transform); 0 = default
  uint32_t rounds = 0;   // specialization constant 4, kernel-specific (sort: staging rounds); 0 = default
  uint32_t width = 0;    // specialization constant 6, kernel-specific (sort: units per wide value); 0 = default
  uint32_t bindings = 2;
  uint32_t push_bytes = 0;
  bool uses_subgroups = false;  // pin requiredSubgroupSize + full subgroups where the device allows
  // Storage-buffer robustness disabled where the device allows (feature_pipeline_robustness): only for
  // kernels whose every access is in bounds by construction (onesweep).
  bool unchecked_storage = false;
  // The plan that asks ("Reduce"): starts the message of a build error. Not part of the kernel's identity.
  const char* plan = nullptr;
};

struct Kernel {
  KernelDesc desc;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  bool push_descriptors = false;
  // The driver's statistics, read right after creation when the context captures them
  // (KernelDevice::capture_statistics); see vkprim::KernelStatistics for the format.
  std::vector<std::pair<std::string, std::string>> statistics;
};

// The variant with its operator, as reported to users and in errors: "u32.min", "u32.min.nosg", "default".
std::string variant_label(const KernelDesc& desc);

// What building a pipeline needs of the device that runs it (the context fills it in; this layer knows
// no context).
struct KernelDevice {
  const DeviceFunctions& vk;
  VkDevice device;
  VkPipelineCache pipeline_cache;
  const Capabilities& caps;
  bool push_descriptors;    // set layouts for vkCmdPushDescriptorSetKHR
  bool capture_statistics;  // VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, read back into Kernel::statistics
};

// The subgroups a kernel that uses them runs with: `full` invocations each, all active (0: no requirement),
// that size required exactly where `pinned` (ContextImpl::full_subgroup_size, pins_largest_subgroup).
struct KernelSubgroups {
  uint32_t full = 0;
  bool pinned = false;
};

// Builds the pipeline of `desc` from its embedded SPIR-V; errors name the kernel and its variant.
Result<std::unique_ptr<Kernel>> build_kernel(const KernelDevice& device, const KernelDesc& desc,
                                             KernelSubgroups subgroups);
void destroy_kernel(const KernelDevice& device, Kernel& kernel);

}  // namespace vkprim::detail
