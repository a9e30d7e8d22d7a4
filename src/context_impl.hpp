// The state behind vkprim::Context.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <optional>
#include <tuple>
#include <vector>

#include "kernel.hpp"
#include "vk_functions.hpp"
#include "vkprim/context.hpp"

namespace vkprim::detail {

// Profiling hook for the tools (`vkprim bench ... --profile`), not part of the API: while set, every
// recorded pass is followed by a bottom-of-pipe timestamp in `pool` (one before the first pass), and its
// label is kept, so the time of each pass is the difference of consecutive stamps. Not thread-safe: the
// tool records from one thread while it is set.
struct PassTimer {
  VkQueryPool pool = VK_NULL_HANDLE;
  uint32_t capacity = 0;
  uint32_t used = 0;
  std::vector<std::string> labels;  // labels[i]: the pass that ends at stamp i (labels[0] = "start")
};

struct ContextImpl {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  InstanceFunctions vki;
  DeviceFunctions vk;
  Capabilities caps;
  ContextOptions options;
  Testing testing;
  // Plans created from this context and not yet destroyed (ContextLease); ~Context aborts unless 0.
  std::atomic<uint64_t> live_plans{0};
  bool sync2 = false;
  bool debug_labels = false;
  bool capture_statistics = false;  // options.capture_pipeline_statistics and feature_pipeline_statistics
  PassTimer* pass_timer = nullptr;

  std::mutex kernel_mutex;
  // Keyed by every KernelDesc field, the group first: a user operator's group holds kernels of vkprim's names.
  using KernelKey = std::tuple<const ShaderGroup*, KernelName, std::string, std::optional<Op>, uint32_t, uint32_t,
                               Specialization, bool, bool>;
  std::map<KernelKey, std::unique_ptr<Kernel>> kernels;

  // The subgroup size every subgroup of a kernel of `wg` invocations is guaranteed to run with, all lanes
  // active, or 0 where no pipeline can guarantee that. Without REQUIRE_FULL_SUBGROUPS a driver may launch
  // subgroups with only some lanes active (lavapipe at 1024-bit vectors reports 32 and runs 16), so the
  // subgroup kernels, which count lanes by gl_SubgroupSize and order a tile by lane, run only where this
  // is nonzero (use_subgroups) and take the shared-memory emulation elsewhere. build_kernel (kernel.cpp) pins the same size:
  // the device's largest with requiredSubgroupSize where the workgroup holds few enough subgroups
  // (maxComputeWorkgroupSubgroups), else the default size with full subgroups alone.
  uint32_t full_subgroup_size(uint32_t wg) const {
    if (!caps.has(feature_subgroup_size_control) || caps.max_subgroup_size == 0 || wg % caps.max_subgroup_size != 0)
      return 0;
    return pins_largest_subgroup(wg) ? caps.max_subgroup_size : caps.subgroup_size;
  }
  // Whether requiredSubgroupSize may pin the largest size for `wg` invocations (at most
  // maxComputeWorkgroupSubgroups subgroups per workgroup).
  bool pins_largest_subgroup(uint32_t wg) const {
    return wg <= uint64_t(caps.max_subgroup_size) * caps.max_workgroup_subgroups;
  }
  // Whether a kernel of `wg` invocations that uses subgroup operations takes its subgroup variant.
  bool use_subgroups(uint32_t wg) const {
    return caps.has(feature_subgroup_arithmetic) && !options.force_no_subgroups && full_subgroup_size(wg) != 0;
  }
  bool use_push_descriptors() const { return caps.has(feature_push_descriptors); }
  // Not-ready polls before a chained kernel's tile falls back. llvmpipe gives all the loops of one invocation
  // 65535 iterations together and then lets every loop fall through with its state undefined (a select whose
  // look-back it cut wrote a wrong count); the kernels fall back on any not-ready predecessor once their
  // tile's look-back has taken LOOK_TRIP_LIMIT (4096) steps (shaders/common/config.glsl), which bounds the
  // polls whatever this limit.
  uint32_t spin_limit() const {
    constexpr uint32_t kLlvmpipeSpinLimit = 4096;
    if (caps.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) return std::min(options.fallback_spin_limit, kLlvmpipeSpinLimit);
    return options.fallback_spin_limit;
  }
  // Whether a dispatch of `tiles` tiles of a chained kernel that can fall back takes its tiles in launch
  // order (ContextOptions::tile_order; automatic: NVIDIA's driver). In launch order a tile may find every
  // predecessor unlaunched and reduce each itself; on llvmpipe, whose loops share one budget
  // (docs/ALGORITHMS.md, "Loop budget"), each such fallback costs up to ~45 loop iterations (the keyed
  // kernel; scan, select and onesweep under 16) on top of the look-back's 4096 steps, so launch order
  // holds there only up to kLoopBudgetLaunchTiles tiles (512 x 45 + 4096 is 41% of the budget); larger
  // dispatches take tickets, which leave a tile at most a few running predecessors.
  static constexpr uint64_t kLoopBudgetLaunchTiles = 512;
  bool launch_order(uint64_t tiles) const {
    const bool launch = options.tile_order == TileOrder::automatic
                            ? caps.driver_id == VK_DRIVER_ID_NVIDIA_PROPRIETARY
                            : options.tile_order == TileOrder::launch;
    return launch && (caps.driver_id != VK_DRIVER_ID_MESA_LLVMPIPE || tiles <= kLoopBudgetLaunchTiles);
  }
  // What build_kernel needs of this context.
  KernelDevice kernel_device() const {
    return {vk, device, pipeline_cache, caps, use_push_descriptors(), capture_statistics};
  }
};

// Returns the kernel of `desc` from the context's cache, building it on first use (valid as long as the
// context); a build error starts with desc.plan where set. Thread-safe.
Result<const Kernel*> get_kernel(ContextImpl& context, const KernelDesc& desc);
// Destroys every cached pipeline (~Context).
void destroy_kernels(ContextImpl& context);

// A plan's pointer to its context, counted in ContextImpl::live_plans while the plan lives: a plan that
// outlived its context would use freed memory when recorded or destroyed, so ~Context aborts instead.
class ContextLease {
 public:
  ContextLease() = default;
  ContextLease(const ContextLease&) = delete;
  ContextLease& operator=(const ContextLease&) = delete;
  ~ContextLease() { reset(); }
  ContextLease& operator=(ContextImpl* context) {
    reset();
    context_ = context;
    if (context_) context_->live_plans.fetch_add(1, std::memory_order_relaxed);
    return *this;
  }
  ContextImpl* operator->() const { return context_; }
  ContextImpl& operator*() const { return *context_; }

 private:
  void reset() {
    if (context_) context_->live_plans.fetch_sub(1, std::memory_order_relaxed);
    context_ = nullptr;
  }
  ContextImpl* context_ = nullptr;
};

// Capability probe shared by Context::create and device_requirements.
struct ProbedDevice {
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceFeatures2 features2{};
  VkPhysicalDeviceVulkan11Features v11{};
  VkPhysicalDeviceVulkan12Features v12{};
  VkPhysicalDeviceVulkan13Features v13{};
  VkPhysicalDevicePipelineRobustnessFeaturesEXT pipeline_robustness{};  // queried where the extension exists
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm_builtins{};
  VkPhysicalDeviceShaderCorePropertiesAMD amd_cores{};
  bool has_sm_builtins = false;
  bool has_amd_cores = false;
  bool has_partitioned = false;   // VK_NV_shader_subgroup_partitioned
  bool has_push_descriptor = false;
  bool has_sync2_ext = false;
  bool has_size_control_ext = false;
  bool has_memory_model_ext = false;
  bool has_8bit_storage_ext = false;   // 8-bit storage reachable: Vulkan 1.2, or VK_KHR_8bit_storage
  bool has_pipeline_robustness_ext = false;   // VK_EXT_pipeline_robustness
  bool timestamps = false;
  float timestamp_period = 0;
  uint32_t timestamp_bits = 0;
};
// Probes at the effective version min(device, instance_version): features that reach that version only
// through extensions (16- and 8-bit storage below 1.2, subgroup size control and synchronization2 below
// 1.3) are read from their per-extension structs into v11 / v12 / v13, so the fields read the same at
// every version.
Result<ProbedDevice> probe_device(const InstanceFunctions& vki, VkPhysicalDevice physical_device,
                                  uint32_t queue_family_index, uint32_t instance_version);

}  // namespace vkprim::detail
