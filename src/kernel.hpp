// Compute pipelines built from embedded SPIR-V. The context caches them by (kernel, variant, specialization):
// get_kernel in context_impl.hpp.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "kernel_info.hpp"
#include "kernel_names.hpp"
#include "vk_functions.hpp"
#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim::detail {

struct ShaderGroup;

// A kernel of the generated list (kernel_names.hpp, from shaders/kernels.cmake). Only kernel_name() and
// find() make one, so C++ cannot name a kernel the build does not list.
class KernelName {
 public:
  // The listed kernel called `name`, if any: for compile-time tables of composed names.
  static constexpr std::optional<KernelName> find(std::string_view name) {
    for (const KernelInfo& k : kKernelList)
      if (name == k.name) return KernelName(k);
    return std::nullopt;
  }
  constexpr const char* name() const { return info_->name; }
  constexpr uint32_t bindings() const { return info_->bindings; }
  constexpr uint32_t push_bytes() const { return info_->push_bytes; }
  constexpr bool declares(SpecId id) const { return (info_->constants & spec_bit(id)) != 0; }
  constexpr const KernelInfo& info() const { return *info_; }
  constexpr auto operator<=>(const KernelName&) const = default;

 private:
  constexpr explicit KernelName(const KernelInfo& info) : info_(&info) {}
  const KernelInfo* info_;
};

// Never defined: kernel_name() calls it for a name that is not listed, which stops the compilation there.
void kernel_not_listed_in_shaders_kernels_cmake();

// kernel_name("scan/chained_lookback"): a listed kernel, or a compile error.
consteval KernelName kernel_name(std::string_view name) {
  const std::optional<KernelName> kernel = KernelName::find(name);
  if (!kernel) kernel_not_listed_in_shaders_kernels_cmake();
  return *kernel;
}

// The kernel-specific specialization constants, one field per constant (SpecId); 0 leaves the shader's
// default. WG_SIZE, ITEMS and VK_OP are KernelDesc's workgroup_size, items and op.
struct Specialization {
  uint32_t look_windows = 0;    // LOOK_WINDOWS: the chained scan's look-back windows per step
  uint32_t key_flags = 0;       // KEY_FLAGS: the sort's key transform (and its SORT_HIST_PARTIALS bit)
  uint32_t stage_rounds = 0;    // STAGE_ROUNDS: onesweep's staging rounds
  uint32_t value_units = 0;     // VALUE_UNITS: the sort's units per wide value
  uint32_t subgroup_min = 0;    // SUBGROUP_MIN: the sort's smallest subgroup size
  uint32_t phase = 0;           // PHASE: the portable keyed kernel's phase
  uint32_t mode = 0;            // MODE: the keyed primitive
  uint32_t rejected_order = 0;  // REJECTED_ORDER: Partition's rejected elements reversed (1)
  uint32_t channels = 0;        // CHANNELS: the histogram's interleaved channels
  uint32_t bin_mode = 0;        // BIN_MODE: the histogram's binning (common/histogram.glsl)
  uint32_t shared_words = 0;    // SHARED_WORDS: the histogram's shared array, in u32 words

  struct Constant {
    SpecId id;
    uint32_t value;
  };
  constexpr std::array<Constant, 11> constants() const {
    return {{{SpecId::look_windows, look_windows},
             {SpecId::key_flags, key_flags},
             {SpecId::stage_rounds, stage_rounds},
             {SpecId::value_units, value_units},
             {SpecId::subgroup_min, subgroup_min},
             {SpecId::phase, phase},
             {SpecId::mode, mode},
             {SpecId::rejected_order, rejected_order},
             {SpecId::channels, channels},
             {SpecId::bin_mode, bin_mode},
             {SpecId::shared_words, shared_words}}};
  }
  constexpr auto operator<=>(const Specialization&) const = default;
};

// A pipeline to build: the kernel (its bindings and push constants are the list's), its variant and its
// specialization.
struct KernelDesc {
  KernelName kernel;
  const ShaderGroup* group = nullptr;  // the embedded group holding the kernel (shader_groups.hpp)
  std::string variant;   // "u32", "u32.nosg", "default"
  std::optional<Op> op;  // VK_OP, for the kernels that combine with an operator
  uint32_t workgroup_size = 256;  // WG_SIZE
  uint32_t items = 1;             // ITEMS
  Specialization spec;
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
