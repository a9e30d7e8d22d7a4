// vkprim/context.hpp — borrow an engine's VkDevice: function tables, capabilities, pipeline/kernel cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// Device features vkprim can use. detail::Testing::mask_features hides them as if absent (for tests).
enum Feature : uint32_t {
  feature_subgroup_arithmetic = 1u << 0,   // subgroupAdd/Min/..., scans and ballot in compute (1.1 property)
  feature_subgroup_size_control = 1u << 1, // requiredSubgroupSize + full subgroups
  feature_int64 = 1u << 2,                 // shaderInt64
  feature_float64 = 1u << 3,               // shaderFloat64
  feature_subgroup_extended_types = 1u << 4,  // 64-bit integers in subgroup operations
  feature_int64_atomics = 1u << 5,         // shaderBufferInt64Atomics
  feature_memory_model = 1u << 6,          // vulkanMemoryModel + vulkanMemoryModelDeviceScope (the kernels
                                           // outside the memory model use unscoped atomics, which are device
                                           // scope: with vulkanMemoryModel on, Vulkan allows that scope only
                                           // with vulkanMemoryModelDeviceScope)
  feature_push_descriptors = 1u << 7,      // VK_KHR_push_descriptor
  feature_synchronization2 = 1u << 8,      // vkCmdPipelineBarrier2
  feature_debug_utils = 1u << 9,           // VK_EXT_debug_utils labels (instance extension)
  feature_timestamps = 1u << 10,           // timestamp queries on the context's queue family
  feature_subgroup_partitioned = 1u << 11, // VK_NV_shader_subgroup_partitioned in compute (subgroupPartitionNV)
  feature_pipeline_statistics = 1u << 12,  // VK_KHR_pipeline_executable_properties + pipelineExecutableInfo
  feature_pipeline_robustness = 1u << 13,  // VK_EXT_pipeline_robustness + pipelineRobustness: kernels whose
                                           // accesses are proven in bounds (onesweep) drop the driver's checks
  feature_storage_16bit = 1u << 14,        // storageBuffer16BitAccess (Vulkan 1.1, VK_KHR_16bit_storage): u16 keys
  feature_storage_8bit = 1u << 15,         // storageBuffer8BitAccess (Vulkan 1.2, VK_KHR_8bit_storage): u8 keys
};

// What the context found on the device after applying what the caller enabled and the masks.
struct Capabilities {
  std::string device_name;
  uint32_t vendor_id = 0, device_id = 0, api_version = 0, driver_version = 0;
  VkPhysicalDeviceType device_type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  VkDriverId driver_id = static_cast<VkDriverId>(0);
  std::string driver_name, driver_info;
  uint32_t features = 0;                    // Feature bits
  uint32_t subgroup_size = 1;               // the default size the driver reports
  uint32_t min_subgroup_size = 1, max_subgroup_size = 1;
  uint32_t max_workgroup_subgroups = 0;     // maxComputeWorkgroupSubgroups (subgroup size control)
  VkSubgroupFeatureFlags subgroup_operations = 0;
  uint32_t max_shared_memory = 0;           // maxComputeSharedMemorySize
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_size[3] = {};
  uint32_t max_workgroup_count[3] = {};     // after detail::Testing::max_workgroups_per_dimension
  VkDeviceSize max_storage_buffer_range = 0;  // after detail::Testing::max_storage_buffer_range
  VkDeviceSize min_storage_buffer_offset_alignment = 0;
  uint32_t max_push_constants = 0;
  // Streaming multiprocessors / compute units and resident threads per unit, where the driver says
  // (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties); 0 when unknown.
  uint32_t compute_units = 0;
  uint32_t threads_per_compute_unit = 0;
  float timestamp_period_ns = 0;            // 0 when timestamps are unsupported
  uint32_t timestamp_valid_bits = 0;
  bool has(uint32_t feature) const { return (features & feature) == feature; }
};

// Where a workgroup of the chained kernels that can fall back (chained_fallback scan, chained Select and
// Partition, the chained keyed primitives, onesweep sort) takes its tile index from. ticket: an atomic
// counter, so tiles start in index order whatever order the device launches workgroups in. launch: the
// workgroup index itself, one global atomic and one barrier less per tile; a device that launches out of
// order costs redundant fallback work, never a hang or a wrong result. automatic: launch on NVIDIA's driver
// (measured to launch in order, and faster with launch: docs/PERFORMANCE.md), ticket elsewhere.
// chained_lookback scans always take tickets. On llvmpipe (lavapipe), whose loops share one iteration
// budget per invocation, launch holds only for dispatches of at most 512 tiles and larger ones take
// tickets (docs/ALGORITHMS.md, "Loop budget"); Context::tile_order(tiles) says which a dispatch takes.
enum class TileOrder { automatic, ticket, launch };

struct ContextOptions {
  bool force_no_subgroups = false;       // use the shared-memory emulation of subgroup operations
  bool disable_push_descriptors = false; // bind through descriptor sets the plans allocate instead
  bool debug_labels = true;              // name each pass with VK_EXT_debug_utils where enabled
  uint32_t fallback_spin_limit = 64;     // chained kernels: not-ready polls before a tile falls back
                                         // (Select takes at most 65535, lavapipe at most 4096: its
                                         // loops stop after 65535 iterations)
  // Look-back statistics counted in scratch by the chained scan, chained Select / Partition, the chained
  // keyed primitives and onesweep (statistics_offset()): look-back steps and deepest look-back, and
  // onesweep's tile count. Off (the default) saves two or three same-address atomics per tile; tiles
  // started (scan, select, keyed) and fallbacks taken are counted either way.
  bool collect_statistics = false;
  TileOrder tile_order = TileOrder::automatic;
  // Without push descriptors (VK_KHR_push_descriptor absent, or disable_push_descriptors) each record
  // writes one fresh descriptor set per dispatch, taken from pools of this many sets that the plan adds as
  // it needs them: a record never fails for want of sets, and no set is ever looked up by buffer handle
  // (a destroyed buffer's handle reused by the driver cannot meet a stale set). The sets stay allocated
  // until the plan's release_descriptor_sets(), which the caller calls once no pending command buffer holds
  // a record of that plan (with frames in flight: a plan per frame, released when its fence signals).
  uint32_t descriptor_sets_per_pool = 64;
  // Create every pipeline with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR and keep the driver's statistics
  // (Context::kernel_statistics). Effective only where the device was created with
  // VK_KHR_pipeline_executable_properties and its pipelineExecutableInfo feature (feature_pipeline_statistics).
  bool capture_pipeline_statistics = false;
};

// The driver's statistics for one kernel pipeline (VK_KHR_pipeline_executable_properties), for occupancy
// tuning: registers, shared memory, spills, ... as the driver names them.
struct KernelStatistics {
  std::string kernel, variant;           // "reduce/grid_stride", "u32.add" (type, operator, ".nosg" for emulation)
  uint32_t workgroup_size = 0, items = 0;
  uint32_t tuning = 0;                   // a kernel-specific knob (chained scan: look-back windows; histogram:
                                         // channels), 0 = none
  uint32_t mode = 0;                     // a kernel-specific variant (sort: key transform bits; histogram:
                                         // binning), 0 = none
  uint32_t rounds = 0;                   // a kernel-specific count (sort: tile staging rounds), 0 = none
  // Statistic name -> value as text (bool32 "true"/"false", integers in decimal, float64 as %g), in the
  // driver's order. Where a pipeline has several executables, each name is prefixed "<executable>: ".
  std::vector<std::pair<std::string, std::string>> values;
};

namespace detail {
// Test hooks: they make a device look smaller or less capable than it is, or break the chained kernels'
// publication on purpose, so tests reach the paths other devices take. Not for engines: nothing about them
// is promised across versions.
struct Testing {
  uint32_t mask_features = 0;                 // Feature bits to treat as absent
  uint32_t max_workgroups_per_dimension = 0;  // 0 = device limit; lower it to test y/z spill
  VkDeviceSize max_storage_buffer_range = 0;  // 0 = device limit; lower it to test windowing
  // Every k-th chained-scan tile (not tile 0) publishes nothing under chained_fallback (successors must
  // reduce it) and only its inclusive prefix under chained_lookback; the same for chained Select /
  // Partition and keyed tiles, and for onesweep sort tiles (per digit pass; with k = 1 tile 0 too), and
  // ContextOptions::fallback_spin_limit bounds their look-back polls too. 0 = off.
  uint32_t skip_publication_period = 0;
};
}  // namespace detail

// Borrow an engine's device. Every Vulkan call goes through function tables loaded from
// get_instance_proc_addr, so vkprim links into engines that use volk or VK_NO_PROTOTYPES and never
// touches their global function pointers. enabled_features is the pNext chain given to vkCreateDevice
// (VkPhysicalDeviceFeatures2 and what it chains); without it only core Vulkan 1.0 features are assumed.
struct ContextCreateInfo {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;  // optional, caller-owned
  uint32_t api_version = VK_API_VERSION_1_1;         // the instance's apiVersion (>= 1.1)
  const VkPhysicalDeviceFeatures2* enabled_features = nullptr;
  std::vector<const char*> enabled_device_extensions;
  bool debug_utils_enabled = false;  // VK_EXT_debug_utils enabled on the instance
  ContextOptions options{};
  detail::Testing testing{};         // test hooks; leave default
};

namespace detail {
// The per-extension feature structs that stand in for DeviceRequirements' Vulkan 1.1 / 1.2 / 1.3 structs
// below those versions, or beside an engine's per-extension structs. features() and merge_into fill them
// from the core structs; they are not meant to be set by hand.
struct ExtensionFeatureStructs {
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  VkPhysicalDeviceShaderAtomicInt64Features atomic_int64{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
  VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures extended_types{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceSynchronization2Features synchronization2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
};
}  // namespace detail

// What to enable at vkCreateDevice for vkprim's fastest paths on one physical device: the extensions
// it supports among those vkprim uses, and the features it wants, held in the Vulkan 1.1 / 1.2 / 1.3
// structs whatever api_version is. Below 1.2 (or 1.3) the features those structs carry reach the device
// through the per-extension structs and extensions that provide them: 16-bit storage
// (VkPhysicalDevice16BitStorageFeatures), 8-bit storage (VK_KHR_8bit_storage), subgroup size control
// (VK_EXT_subgroup_size_control) and synchronization2 (VK_KHR_synchronization2), where the device has them.
// features() links the chain (Features2, then the core structs of api_version or those per-extension
// structs, then the pipeline-robustness struct) and returns its head; the object must stay alive and
// unmoved while the chain is in use.
struct DeviceRequirements {
  uint32_t api_version = VK_API_VERSION_1_1;   // min(device, instance), capped at 1.3
  std::vector<const char*> extensions;
  VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features vulkan11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features vulkan13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  // Where the device has VK_EXT_pipeline_robustness (then also in `extensions`): lets onesweep's pipelines
  // go without the bounds checks NVIDIA's driver otherwise puts on every storage-buffer access.
  VkPhysicalDevicePipelineRobustnessFeaturesEXT pipeline_robustness{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
  detail::ExtensionFeatureStructs extension_structs{};
  VkPhysicalDeviceFeatures2* features();

  // For an engine with its own feature chain, in one call: ORs the features vkprim wants into the matching
  // structs of `chain` (VkPhysicalDeviceFeatures2, the Vulkan 1.1 / 1.2 / 1.3 structs, the per-extension
  // structs they replace, the pipeline-robustness struct) and appends vkprim's own struct for each kind the
  // chain lacks: the core struct of a version where api_version has it and the chain holds no per-extension
  // struct of that version (a core struct may not sit beside them), else the per-extension structs. Adds the
  // missing extensions to `engine_extensions`. Nothing the engine enabled is cleared. Appended structs live in
  // this object: keep it alive and unmoved until vkCreateDevice returns. Merging twice adds nothing more.
  Result<void> merge_into(VkPhysicalDeviceFeatures2& chain, std::vector<const char*>& engine_extensions);
};
// instance_api_version: the apiVersion the instance was created with. The device's effective version is the
// lower of it and the device's (capped at 1.3), and the device is probed at that version. Below 1.2 the
// Vulkan memory model, 64-bit atomics and subgroup extended types stay off (the kernels that use them are
// SPIR-V 1.5, which needs Vulkan 1.2): plans then take their portable paths. 16- and 8-bit storage, subgroup
// size control and synchronization2 come through their extensions below the version that made them core.
// invalid_argument: a null handle or an instance_api_version below 1.1.
Result<DeviceRequirements> device_requirements(VkPhysicalDevice physical_device,
                                               PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                                               VkInstance instance, uint32_t instance_api_version);

namespace detail { struct ContextImpl; }

// A Context must outlive every plan created from it. Thread-safe: plans may be created and recorded
// from several threads at once.
class Context {
 public:
  static Result<std::unique_ptr<Context>> create(const ContextCreateInfo& info);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Capabilities& capabilities() const;
  const ContextOptions& options() const;
  const detail::Testing& testing() const;
  // The order (ticket or launch, never automatic) in which a dispatch of `tiles` tiles of a chained kernel
  // that can fall back takes its tiles: ContextOptions::tile_order as resolved for this device and size.
  TileOrder tile_order(uint64_t tiles) const;
  VkDevice device() const;
  // The statistics of every pipeline this context has built so far (plan creation builds them), ordered
  // by kernel, variant and shape. Empty, with no error, when ContextOptions::capture_pipeline_statistics is
  // off or the device lacks feature_pipeline_statistics; a pipeline whose statistics the driver could not
  // report is listed with no values. Thread-safe.
  std::vector<KernelStatistics> kernel_statistics() const;
  detail::ContextImpl& impl() const { return *impl_; }

 private:
  explicit Context(std::unique_ptr<detail::ContextImpl> impl);
  std::unique_ptr<detail::ContextImpl> impl_;
};

}  // namespace vkprim
