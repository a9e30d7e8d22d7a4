// Context: borrow an engine's device, load function tables, probe capabilities.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "context_impl.hpp"
#include "errors.hpp"

namespace vkprim {
namespace detail {

// Links features2 -> Vulkan 1.1 -> 1.2 -> 1.3 feature structs as far as `version` has them (core structs exist
// only for the versions a device reports; 1.1-only devices keep 1.0 features), then `extension` if given;
// every pNext not linked is cleared.
void link_feature_chain(uint32_t version, VkPhysicalDeviceFeatures2& features2, VkPhysicalDeviceVulkan11Features& v11,
                        VkPhysicalDeviceVulkan12Features& v12, VkPhysicalDeviceVulkan13Features& v13,
                        VkPhysicalDevicePipelineRobustnessFeaturesEXT* extension) {
  features2.pNext = v11.pNext = v12.pNext = v13.pNext = nullptr;
  void** tail = &features2.pNext;
  if (version >= VK_API_VERSION_1_2) {
    features2.pNext = &v11;
    v11.pNext = &v12;
    tail = &v12.pNext;
    if (version >= VK_API_VERSION_1_3) {
      v12.pNext = &v13;
      tail = &v13.pNext;
    }
  }
  if (extension) {
    extension->pNext = nullptr;
    *tail = extension;
  }
}

Result<ProbedDevice> probe_device(const InstanceFunctions& vki, VkPhysicalDevice physical_device,
                                  uint32_t queue_family_index) {
  ProbedDevice p;
  vki.vkGetPhysicalDeviceProperties(physical_device, &p.properties);
  if (p.properties.apiVersion < VK_API_VERSION_1_1)
    return make_error(Status::unsupported, "device '", p.properties.deviceName,
                      "' supports only Vulkan 1.0; vkprim needs Vulkan 1.1");
  const uint32_t version = p.properties.apiVersion;

  uint32_t count = 0;
  vki.vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vki.vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, extensions.data());
  auto has_extension = [&](const char* name) {
    return std::any_of(extensions.begin(), extensions.end(),
                       [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
  };
  p.has_push_descriptor = has_extension(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  p.has_sync2_ext = version >= VK_API_VERSION_1_3 || has_extension(VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME);
  p.has_size_control_ext = version >= VK_API_VERSION_1_3 || has_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  p.has_memory_model_ext = version >= VK_API_VERSION_1_2;
  p.has_sm_builtins = has_extension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  p.has_amd_cores = has_extension(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
  p.has_partitioned = has_extension(VK_NV_SHADER_SUBGROUP_PARTITIONED_EXTENSION_NAME);
  p.has_pipeline_robustness_ext = has_extension(VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME);

  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p.subgroup = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  p.size_control = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  p.driver = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  props2.pNext = &p.subgroup;
  void** tail = &p.subgroup.pNext;
  if (p.has_size_control_ext) { *tail = &p.size_control; tail = &p.size_control.pNext; }
  if (version >= VK_API_VERSION_1_2) { *tail = &p.driver; tail = &p.driver.pNext; }
  p.sm_builtins = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  p.amd_cores = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  if (p.has_sm_builtins) { *tail = &p.sm_builtins; tail = &p.sm_builtins.pNext; }
  if (p.has_amd_cores) { *tail = &p.amd_cores; tail = &p.amd_cores.pNext; }
  vki.vkGetPhysicalDeviceProperties2(physical_device, &props2);

  p.features2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  p.v11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  p.v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  p.v13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  p.pipeline_robustness = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
  link_feature_chain(version, p.features2, p.v11, p.v12, p.v13,
                     p.has_pipeline_robustness_ext ? &p.pipeline_robustness : nullptr);
  vki.vkGetPhysicalDeviceFeatures2(physical_device, &p.features2);
  p.features2.pNext = nullptr;  // ProbedDevice is copied: no pointers into it
  p.v11.pNext = p.v12.pNext = p.v13.pNext = p.pipeline_robustness.pNext = nullptr;

  vki.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vki.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &count, families.data());
  if (queue_family_index >= count)
    return make_error(Status::invalid_argument, "queue_family_index ", queue_family_index, " is not below the ",
                      count, " queue families of the device");
  if (!(families[queue_family_index].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return make_error(Status::invalid_argument, "queue family ", queue_family_index, " has no compute support");
  p.timestamp_bits = families[queue_family_index].timestampValidBits;
  p.timestamps = p.timestamp_bits > 0 && p.properties.limits.timestampPeriod > 0;
  p.timestamp_period = p.properties.limits.timestampPeriod;
  return p;
}

namespace {

bool has_name(const std::vector<const char*>& names, const char* name) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return n && std::strcmp(n, name) == 0; });
}

// What the caller enabled, read from the pNext chain it gave vkCreateDevice.
struct EnabledFeatures {
  bool int64 = false, float64 = false, subgroup_extended_types = false, int64_atomics = false;
  bool memory_model = false, memory_model_device_scope = false;
  bool subgroup_size_control = false, full_subgroups = false, sync2 = false;
  bool pipeline_executable_info = false;
  bool pipeline_robustness = false;
  bool storage_16bit = false, storage_8bit = false;
};

EnabledFeatures read_enabled(const VkPhysicalDeviceFeatures2* head) {
  EnabledFeatures e;
  for (auto* s = reinterpret_cast<const VkBaseInStructure*>(head); s; s = s->pNext) {
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2: {
        auto* f = reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s);
        e.int64 |= f->features.shaderInt64 == VK_TRUE;
        e.float64 |= f->features.shaderFloat64 == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES: {
        e.storage_16bit |= reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
        auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        e.storage_8bit |= f->storageBuffer8BitAccess == VK_TRUE;
        e.subgroup_extended_types |= f->shaderSubgroupExtendedTypes == VK_TRUE;
        e.int64_atomics |= f->shaderBufferInt64Atomics == VK_TRUE;
        e.memory_model |= f->vulkanMemoryModel == VK_TRUE;
        e.memory_model_device_scope |= f->vulkanMemoryModelDeviceScope == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: {
        auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(s);
        e.subgroup_size_control |= f->subgroupSizeControl == VK_TRUE;
        e.full_subgroups |= f->computeFullSubgroups == VK_TRUE;
        e.sync2 |= f->synchronization2 == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES: {
        auto* f = reinterpret_cast<const VkPhysicalDeviceSubgroupSizeControlFeatures*>(s);
        e.subgroup_size_control |= f->subgroupSizeControl == VK_TRUE;
        e.full_subgroups |= f->computeFullSubgroups == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES: {
        e.sync2 |= reinterpret_cast<const VkPhysicalDeviceSynchronization2Features*>(s)->synchronization2 == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES: {
        auto* f = reinterpret_cast<const VkPhysicalDeviceVulkanMemoryModelFeatures*>(s);
        e.memory_model |= f->vulkanMemoryModel == VK_TRUE;
        e.memory_model_device_scope |= f->vulkanMemoryModelDeviceScope == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES: {
        e.storage_16bit |= reinterpret_cast<const VkPhysicalDevice16BitStorageFeatures*>(s)->storageBuffer16BitAccess == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES: {
        e.storage_8bit |= reinterpret_cast<const VkPhysicalDevice8BitStorageFeatures*>(s)->storageBuffer8BitAccess == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES: {
        e.int64_atomics |= reinterpret_cast<const VkPhysicalDeviceShaderAtomicInt64Features*>(s)->shaderBufferInt64Atomics == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT: {
        auto* f = reinterpret_cast<const VkPhysicalDevicePipelineRobustnessFeaturesEXT*>(s);
        e.pipeline_robustness |= f->pipelineRobustness == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR: {
        auto* f = reinterpret_cast<const VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR*>(s);
        e.pipeline_executable_info |= f->pipelineExecutableInfo == VK_TRUE;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES: {
        e.subgroup_extended_types |= reinterpret_cast<const VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures*>(s)
                                         ->shaderSubgroupExtendedTypes == VK_TRUE;
        break;
      }
      default: break;
    }
  }
  return e;
}

}  // namespace
}  // namespace detail

Context::Context(std::unique_ptr<detail::ContextImpl> impl) : impl_(std::move(impl)) {}

Context::~Context() {
  if (!impl_) return;
  if (const uint64_t plans = impl_->live_plans.load(); plans != 0) {
    std::fprintf(stderr,
                 "vkprim: Context destroyed while %llu plans created from it are alive; destroy every plan "
                 "(Reduce, Scan, Select, RadixSort, ...) before its Context\n",
                 static_cast<unsigned long long>(plans));
    std::abort();
  }
  detail::destroy_kernels(*impl_);
}

const Capabilities& Context::capabilities() const { return impl_->caps; }
const ContextOptions& Context::options() const { return impl_->options; }
TileOrder Context::tile_order(uint64_t tiles) const {
  return impl_->launch_order(tiles) ? TileOrder::launch : TileOrder::ticket;
}
VkDevice Context::device() const { return impl_->device; }

std::vector<KernelStatistics> Context::kernel_statistics() const {
  std::vector<KernelStatistics> out;
  if (!impl_->capture_statistics) return out;
  std::lock_guard<std::mutex> lock(impl_->kernel_mutex);
  for (const auto& [key, kernel] : impl_->kernels) {
    const detail::KernelDesc& d = kernel->desc;
    out.push_back({d.kernel, detail::variant_label(d), d.workgroup_size, d.items, d.tuning, d.mode, d.rounds, kernel->statistics});
  }
  return out;
}

Result<std::unique_ptr<Context>> Context::create(const ContextCreateInfo& info) {
  using detail::make_error;
  if (!info.instance || !info.physical_device || !info.device || !info.get_instance_proc_addr)
    return make_error(Status::invalid_argument,
                      "ContextCreateInfo needs instance, physical_device, device and get_instance_proc_addr");
  if (info.api_version < VK_API_VERSION_1_1)
    return make_error(Status::unsupported, "vkprim needs an instance created with apiVersion >= 1.1");
  auto impl = std::make_unique<detail::ContextImpl>();
  impl->instance = info.instance;
  impl->physical_device = info.physical_device;
  impl->device = info.device;
  impl->queue_family_index = info.queue_family_index;
  impl->get_instance_proc_addr = info.get_instance_proc_addr;
  impl->pipeline_cache = info.pipeline_cache;
  impl->options = info.options;
  if (const char* missing = impl->vki.load(info.get_instance_proc_addr, info.instance))
    return make_error(Status::unsupported, "instance function ", missing, " is not available");
  if (const char* missing = impl->vk.load(impl->vki.vkGetDeviceProcAddr, info.device))
    return make_error(Status::unsupported, "device function ", missing, " is not available");

  auto probed = detail::probe_device(impl->vki, info.physical_device, info.queue_family_index);
  if (!probed) return std::move(probed).error();
  const detail::ProbedDevice& p = probed.value();
  const detail::EnabledFeatures enabled = detail::read_enabled(info.enabled_features);
  const uint32_t version = std::min(p.properties.apiVersion, info.api_version);
  const auto& ext = info.enabled_device_extensions;

  Capabilities& c = impl->caps;
  c.device_name = p.properties.deviceName;
  c.vendor_id = p.properties.vendorID;
  c.device_id = p.properties.deviceID;
  c.api_version = version;
  c.driver_version = p.properties.driverVersion;
  c.device_type = p.properties.deviceType;
  c.driver_id = p.driver.driverID;
  c.driver_name = p.driver.driverName;
  c.driver_info = p.driver.driverInfo;
  c.subgroup_size = p.subgroup.subgroupSize;
  c.subgroup_operations = p.subgroup.supportedOperations;
  c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size;
  const auto& limits = p.properties.limits;
  c.max_shared_memory = limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
    if (info.options.max_workgroups_per_dimension)
      c.max_workgroup_count[i] = std::min(c.max_workgroup_count[i], info.options.max_workgroups_per_dimension);
  }
  c.max_storage_buffer_range = limits.maxStorageBufferRange;
  if (info.options.max_storage_buffer_range)
    c.max_storage_buffer_range = std::min<VkDeviceSize>(c.max_storage_buffer_range, info.options.max_storage_buffer_range);
  c.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;
  c.max_push_constants = limits.maxPushConstantsSize;
  if (p.has_sm_builtins && p.sm_builtins.shaderSMCount) {
    c.compute_units = p.sm_builtins.shaderSMCount;
    c.threads_per_compute_unit = p.sm_builtins.shaderWarpsPerSM * 32;
  } else if (p.has_amd_cores && p.amd_cores.computeUnitsPerShaderArray) {
    c.compute_units = p.amd_cores.shaderEngineCount * p.amd_cores.shaderArraysPerEngineCount *
                      p.amd_cores.computeUnitsPerShaderArray;
    c.threads_per_compute_unit = p.amd_cores.simdPerComputeUnit * p.amd_cores.wavefrontsPerSimd * p.amd_cores.wavefrontSize;
  }
  if (p.timestamps) {
    c.features |= feature_timestamps;
    c.timestamp_period_ns = p.timestamp_period;
    c.timestamp_valid_bits = p.timestamp_bits;
  }

  const VkSubgroupFeatureFlags needed =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT;
  if ((p.subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (p.subgroup.supportedOperations & needed) == needed &&
      p.subgroup.subgroupSize >= 4)
    c.features |= feature_subgroup_arithmetic;
  const bool size_control_enabled =
      p.has_size_control_ext && enabled.subgroup_size_control && enabled.full_subgroups &&
      (version >= VK_API_VERSION_1_3 || detail::has_name(ext, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) &&
      (p.size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  if (size_control_enabled) {
    c.features |= feature_subgroup_size_control;
    c.min_subgroup_size = p.size_control.minSubgroupSize;
    c.max_subgroup_size = p.size_control.maxSubgroupSize;
    c.max_workgroup_subgroups = p.size_control.maxComputeWorkgroupSubgroups;
  }
  if (enabled.int64) c.features |= feature_int64;
  if (enabled.float64) c.features |= feature_float64;
  if (enabled.subgroup_extended_types && version >= VK_API_VERSION_1_2) c.features |= feature_subgroup_extended_types;
  if (enabled.int64_atomics) c.features |= feature_int64_atomics;
  if (enabled.memory_model && enabled.memory_model_device_scope && version >= VK_API_VERSION_1_2)
    c.features |= feature_memory_model;
  if (detail::has_name(ext, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) && !info.options.disable_push_descriptors)
    c.features |= feature_push_descriptors;
  if (enabled.sync2 && (version >= VK_API_VERSION_1_3 || detail::has_name(ext, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME)))
    c.features |= feature_synchronization2;
  if (detail::has_name(ext, VK_NV_SHADER_SUBGROUP_PARTITIONED_EXTENSION_NAME) &&
      (p.subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
      (p.subgroup.supportedOperations & VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV))
    c.features |= feature_subgroup_partitioned;
  if (info.debug_utils_enabled && impl->vki.vkCmdBeginDebugUtilsLabelEXT && impl->vki.vkCmdEndDebugUtilsLabelEXT)
    c.features |= feature_debug_utils;
  // Capturing statistics needs the feature enabled (validation rejects the pipeline flag otherwise) and both
  // query functions (a loader or layer may not expose them).
  if (enabled.pipeline_executable_info &&
      detail::has_name(ext, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) &&
      impl->vk.vkGetPipelineExecutablePropertiesKHR && impl->vk.vkGetPipelineExecutableStatisticsKHR)
    c.features |= feature_pipeline_statistics;
  if (enabled.pipeline_robustness && detail::has_name(ext, VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME))
    c.features |= feature_pipeline_robustness;
  // 16-bit storage is core in Vulkan 1.1, 8-bit storage in 1.2 (before that, VK_KHR_8bit_storage).
  if (enabled.storage_16bit) c.features |= feature_storage_16bit;
  if (enabled.storage_8bit && (version >= VK_API_VERSION_1_2 || detail::has_name(ext, VK_KHR_8BIT_STORAGE_EXTENSION_NAME)))
    c.features |= feature_storage_8bit;
  c.features &= ~info.options.mask_features;
  if (!c.has(feature_push_descriptors) || !impl->vk.vkCmdPushDescriptorSetKHR) c.features &= ~feature_push_descriptors;
  if (c.has(feature_synchronization2) && !impl->vk.vkCmdPipelineBarrier2) {
    impl->vk.vkCmdPipelineBarrier2 = impl->vk.vkCmdPipelineBarrier2KHR;
    if (!impl->vk.vkCmdPipelineBarrier2) c.features &= ~feature_synchronization2;
  }
  if (!c.has(feature_subgroup_size_control)) c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size;
  impl->sync2 = c.has(feature_synchronization2);
  impl->debug_labels = c.has(feature_debug_utils) && info.options.debug_labels;
  impl->capture_statistics = c.has(feature_pipeline_statistics) && info.options.capture_pipeline_statistics;
  return std::unique_ptr<Context>(new Context(std::move(impl)));
}

VkPhysicalDeviceFeatures2* DeviceRequirements::features() {
  detail::link_feature_chain(api_version, features2, vulkan11, vulkan12, vulkan13,
                             pipeline_robustness.pipelineRobustness ? &pipeline_robustness : nullptr);
  return &features2;
}

Result<void> DeviceRequirements::merge_into(VkPhysicalDeviceFeatures2& chain, std::vector<const char*>& engine_extensions) {
  using detail::make_error;
  // What the chain holds, found before anything is written so an error leaves it untouched.
  VkPhysicalDeviceVulkan11Features* v11 = nullptr;
  VkPhysicalDevice16BitStorageFeatures* storage16 = nullptr;
  bool split11 = false;  // any struct that VkPhysicalDeviceVulkan11Features replaces (none may sit beside it)
  VkPhysicalDeviceVulkan12Features* v12 = nullptr;
  VkPhysicalDeviceVulkan13Features* v13 = nullptr;
  VkPhysicalDeviceVulkanMemoryModelFeatures* memory_model = nullptr;
  VkPhysicalDeviceShaderAtomicInt64Features* atomic_int64 = nullptr;
  VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures* extended_types = nullptr;
  VkPhysicalDevice8BitStorageFeatures* storage8 = nullptr;
  VkPhysicalDeviceSubgroupSizeControlFeatures* size_control = nullptr;
  VkPhysicalDeviceSynchronization2Features* sync2 = nullptr;
  VkPhysicalDevicePipelineRobustnessFeaturesEXT* robustness = nullptr;
  bool other12 = false, other13 = false;  // per-extension structs of 1.2 / 1.3 that vkprim does not use
  VkBaseOutStructure* last = reinterpret_cast<VkBaseOutStructure*>(&chain);
  for (auto* s = reinterpret_cast<VkBaseOutStructure*>(&chain); s; s = s->pNext) {
    last = s;
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
        v11 = reinterpret_cast<VkPhysicalDeviceVulkan11Features*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
        storage16 = reinterpret_cast<VkPhysicalDevice16BitStorageFeatures*>(s);
        split11 = true;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTIVIEW_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VARIABLE_POINTERS_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROTECTED_MEMORY_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SAMPLER_YCBCR_CONVERSION_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_DRAW_PARAMETERS_FEATURES:
        split11 = true;
        break;
      // The other structs VkPhysicalDeviceVulkan12Features / 13Features replace (VUID-VkDeviceCreateInfo-pNext-02830,
      // -06532): where one is in the chain, no core struct of that version may be appended.
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGELESS_FRAMEBUFFER_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SEPARATE_DEPTH_STENCIL_LAYOUTS_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
        other12 = true;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_ROBUSTNESS_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_INLINE_UNIFORM_BLOCK_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRIVATE_DATA_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_DEMOTE_TO_HELPER_INVOCATION_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_TERMINATE_INVOCATION_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TEXTURE_COMPRESSION_ASTC_HDR_FEATURES:
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ZERO_INITIALIZE_WORKGROUP_MEMORY_FEATURES:
        other13 = true;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES:
        v12 = reinterpret_cast<VkPhysicalDeviceVulkan12Features*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
        v13 = reinterpret_cast<VkPhysicalDeviceVulkan13Features*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES:
        memory_model = reinterpret_cast<VkPhysicalDeviceVulkanMemoryModelFeatures*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES:
        atomic_int64 = reinterpret_cast<VkPhysicalDeviceShaderAtomicInt64Features*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES:
        extended_types = reinterpret_cast<VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
        storage8 = reinterpret_cast<VkPhysicalDevice8BitStorageFeatures*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES:
        size_control = reinterpret_cast<VkPhysicalDeviceSubgroupSizeControlFeatures*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES:
        sync2 = reinterpret_cast<VkPhysicalDeviceSynchronization2Features*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT:
        robustness = reinterpret_cast<VkPhysicalDevicePipelineRobustnessFeaturesEXT*>(s);
        break;
      default: break;
    }
  }
  const bool want11 = vulkan11.storageBuffer16BitAccess;
  const bool want12 = vulkan12.vulkanMemoryModel || vulkan12.shaderBufferInt64Atomics ||
                      vulkan12.shaderSubgroupExtendedTypes || vulkan12.storageBuffer8BitAccess;
  const bool want13 = vulkan13.subgroupSizeControl || vulkan13.synchronization2;
  const bool split12 = memory_model || atomic_int64 || extended_types || storage8 || other12;
  const bool split13 = size_control || sync2 || other13;
  auto missing = [&](const char* name) {
    return make_error(Status::invalid_argument, "DeviceRequirements::merge_into: the chain enables features through ",
                      "per-extension structs but has no ", name, ", which vkprim needs; add it (a core feature ",
                      "struct may not sit beside per-extension ones)");
  };
  if (!v11 && split11 && vulkan11.storageBuffer16BitAccess && !storage16)
    return missing("VkPhysicalDevice16BitStorageFeatures");
  if (!v12 && split12) {
    if (vulkan12.vulkanMemoryModel && !memory_model) return missing("VkPhysicalDeviceVulkanMemoryModelFeatures");
    if (vulkan12.shaderBufferInt64Atomics && !atomic_int64) return missing("VkPhysicalDeviceShaderAtomicInt64Features");
    if (vulkan12.shaderSubgroupExtendedTypes && !extended_types)
      return missing("VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures");
    if (vulkan12.storageBuffer8BitAccess && !storage8) return missing("VkPhysicalDevice8BitStorageFeatures");
  }
  if (!v13 && split13) {
    if (vulkan13.subgroupSizeControl && !size_control) return missing("VkPhysicalDeviceSubgroupSizeControlFeatures");
    if (vulkan13.synchronization2 && !sync2) return missing("VkPhysicalDeviceSynchronization2Features");
  }

  chain.features.shaderInt64 |= features2.features.shaderInt64;
  chain.features.shaderFloat64 |= features2.features.shaderFloat64;
  auto append = [&](VkBaseOutStructure* s) {
    s->pNext = nullptr;
    last->pNext = s;
    last = s;
  };
  if (want11 && !v11 && !split11) append(reinterpret_cast<VkBaseOutStructure*>(&vulkan11));
  else if (v11) v11->storageBuffer16BitAccess |= vulkan11.storageBuffer16BitAccess;
  else if (storage16) storage16->storageBuffer16BitAccess |= vulkan11.storageBuffer16BitAccess;
  if (want12 && !v12 && !split12) append(reinterpret_cast<VkBaseOutStructure*>(&vulkan12));
  else if (v12) {
    v12->vulkanMemoryModel |= vulkan12.vulkanMemoryModel;
    v12->vulkanMemoryModelDeviceScope |= vulkan12.vulkanMemoryModelDeviceScope;
    v12->shaderBufferInt64Atomics |= vulkan12.shaderBufferInt64Atomics;
    v12->shaderSubgroupExtendedTypes |= vulkan12.shaderSubgroupExtendedTypes;
    v12->storageBuffer8BitAccess |= vulkan12.storageBuffer8BitAccess;
  } else {
    if (memory_model) {
      memory_model->vulkanMemoryModel |= vulkan12.vulkanMemoryModel;
      memory_model->vulkanMemoryModelDeviceScope |= vulkan12.vulkanMemoryModelDeviceScope;
    }
    if (atomic_int64) atomic_int64->shaderBufferInt64Atomics |= vulkan12.shaderBufferInt64Atomics;
    if (extended_types) extended_types->shaderSubgroupExtendedTypes |= vulkan12.shaderSubgroupExtendedTypes;
    if (storage8) storage8->storageBuffer8BitAccess |= vulkan12.storageBuffer8BitAccess;
  }
  if (want13 && !v13 && !split13) append(reinterpret_cast<VkBaseOutStructure*>(&vulkan13));
  else if (v13) {
    v13->subgroupSizeControl |= vulkan13.subgroupSizeControl;
    v13->computeFullSubgroups |= vulkan13.computeFullSubgroups;
    v13->synchronization2 |= vulkan13.synchronization2;
  } else {
    if (size_control) {
      size_control->subgroupSizeControl |= vulkan13.subgroupSizeControl;
      size_control->computeFullSubgroups |= vulkan13.computeFullSubgroups;
    }
    if (sync2) sync2->synchronization2 |= vulkan13.synchronization2;
  }
  if (robustness) robustness->pipelineRobustness |= pipeline_robustness.pipelineRobustness;
  else if (pipeline_robustness.pipelineRobustness) append(reinterpret_cast<VkBaseOutStructure*>(&pipeline_robustness));
  for (const char* e : extensions)
    if (!detail::has_name(engine_extensions, e)) engine_extensions.push_back(e);
  return {};
}

Result<DeviceRequirements> device_requirements(VkPhysicalDevice physical_device,
                                               PFN_vkGetInstanceProcAddr get_instance_proc_addr, VkInstance instance,
                                               uint32_t instance_api_version) {
  using detail::make_error;
  if (!physical_device || !get_instance_proc_addr || !instance)
    return make_error(Status::invalid_argument, "device_requirements needs a physical device, instance and loader");
  if (instance_api_version < VK_API_VERSION_1_1)
    return make_error(Status::invalid_argument, "device_requirements: instance_api_version ",
                      VK_API_VERSION_MAJOR(instance_api_version), ".", VK_API_VERSION_MINOR(instance_api_version),
                      " is below 1.1, which vkprim needs");
  detail::InstanceFunctions vki;
  if (const char* missing = vki.load(get_instance_proc_addr, instance))
    return make_error(Status::unsupported, "instance function ", missing, " is not available");
  uint32_t family_count = 0;
  vki.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
  if (family_count == 0) return make_error(Status::unsupported, "device has no queue families");
  auto probed = detail::probe_device(vki, physical_device, 0);
  if (!probed && probed.status() != Status::invalid_argument) return std::move(probed).error();
  // Queue family 0 may lack compute; features do not depend on it, so probe again without that check.
  detail::ProbedDevice p;
  if (probed) {
    p = probed.value();
  } else {
    for (uint32_t i = 1; i < family_count && !probed; ++i) probed = detail::probe_device(vki, physical_device, i);
    if (!probed) return std::move(probed).error();
    p = probed.value();
  }
  DeviceRequirements r;
  r.api_version = std::min({p.properties.apiVersion, instance_api_version, VK_API_VERSION_1_3});
  if (p.has_push_descriptor) r.extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  // RadixSort's optional one-instruction ranking (SortRanking::partitioned).
  if (p.has_partitioned && (p.subgroup.supportedOperations & VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV))
    r.extensions.push_back(VK_NV_SHADER_SUBGROUP_PARTITIONED_EXTENSION_NAME);
  if (p.has_pipeline_robustness_ext && p.pipeline_robustness.pipelineRobustness) {
    r.extensions.push_back(VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME);
    r.pipeline_robustness.pipelineRobustness = VK_TRUE;
  }
  r.features2.features.shaderInt64 = p.features2.features.shaderInt64;
  r.features2.features.shaderFloat64 = p.features2.features.shaderFloat64;
  if (r.api_version >= VK_API_VERSION_1_2) {
    // u16 and u8 sort keys (RadixSort). On a 1.1 device they would take per-extension structs, which
    // DeviceRequirements does not carry: there they stay off, like every feature below.
    r.vulkan11.storageBuffer16BitAccess = p.v11.storageBuffer16BitAccess;
    r.vulkan12.storageBuffer8BitAccess = p.v12.storageBuffer8BitAccess;
    r.vulkan12.shaderSubgroupExtendedTypes = p.v12.shaderSubgroupExtendedTypes;
    r.vulkan12.shaderBufferInt64Atomics = p.v12.shaderBufferInt64Atomics;
    r.vulkan12.vulkanMemoryModel = p.v12.vulkanMemoryModel;
    r.vulkan12.vulkanMemoryModelDeviceScope = p.v12.vulkanMemoryModelDeviceScope;
  }
  if (r.api_version >= VK_API_VERSION_1_3) {
    r.vulkan13.subgroupSizeControl = p.v13.subgroupSizeControl;
    r.vulkan13.computeFullSubgroups = p.v13.computeFullSubgroups;
    r.vulkan13.synchronization2 = p.v13.synchronization2;
  }
  return r;
}

}  // namespace vkprim
