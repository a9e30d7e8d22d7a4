// Context: borrow an engine's device, load function tables, probe capabilities.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>
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

namespace {

// Reads the device's extensions into the has_* flags, each true where `version` or an extension brings it.
// Returns whether VkPhysicalDeviceDriverProperties may be queried (Vulkan 1.2 or VK_KHR_driver_properties).
bool find_extensions(const InstanceFunctions& vki, VkPhysicalDevice physical_device, uint32_t version,
                     ProbedDevice& p) {
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
  p.has_8bit_storage_ext = version >= VK_API_VERSION_1_2 || has_extension(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  const bool driver_properties = version >= VK_API_VERSION_1_2 || has_extension(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  p.has_sm_builtins = has_extension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  p.has_amd_cores = has_extension(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
  p.has_partitioned = has_extension(VK_NV_SHADER_SUBGROUP_PARTITIONED_EXTENSION_NAME);
  p.has_pipeline_robustness_ext = has_extension(VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME);
  return driver_properties;
}

// The subgroup properties, and those of size control, the driver, NVIDIA's SM builtins and AMD's shader
// cores where the device has them, in one vkGetPhysicalDeviceProperties2.
void read_properties(const InstanceFunctions& vki, VkPhysicalDevice physical_device, bool driver_properties,
                     ProbedDevice& p) {
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p.subgroup = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  p.size_control = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  p.driver = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  props2.pNext = &p.subgroup;
  void** tail = &p.subgroup.pNext;
  if (p.has_size_control_ext) { *tail = &p.size_control; tail = &p.size_control.pNext; }
  if (driver_properties) { *tail = &p.driver; tail = &p.driver.pNext; }
  p.sm_builtins = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  p.amd_cores = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  if (p.has_sm_builtins) { *tail = &p.sm_builtins; tail = &p.sm_builtins.pNext; }
  if (p.has_amd_cores) { *tail = &p.amd_cores; tail = &p.amd_cores.pNext; }
  vki.vkGetPhysicalDeviceProperties2(physical_device, &props2);
  // ProbedDevice is copied: no pointers into it.
  p.subgroup.pNext = p.size_control.pNext = p.driver.pNext = p.sm_builtins.pNext = p.amd_cores.pNext = nullptr;
}

// The features at `version`, in one vkGetPhysicalDeviceFeatures2; those that reach it only through
// extensions are read from their per-extension structs into v11 / v12 / v13.
void read_features(const InstanceFunctions& vki, VkPhysicalDevice physical_device, uint32_t version,
                   ProbedDevice& p) {
  p.features2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  p.v11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  p.v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  p.v13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  p.pipeline_robustness = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
  link_feature_chain(version, p.features2, p.v11, p.v12, p.v13,
                     p.has_pipeline_robustness_ext ? &p.pipeline_robustness : nullptr);
  // Below 1.2 / 1.3, the per-extension structs of the features vkprim can use there.
  ExtensionFeatureStructs split;
  auto append = [&](void* s) {
    auto* tail_struct = reinterpret_cast<VkBaseOutStructure*>(&p.features2);
    while (tail_struct->pNext) tail_struct = tail_struct->pNext;
    tail_struct->pNext = reinterpret_cast<VkBaseOutStructure*>(s);
  };
  if (version < VK_API_VERSION_1_2) {
    append(&split.storage16);
    if (p.has_8bit_storage_ext) append(&split.storage8);
  }
  if (version < VK_API_VERSION_1_3) {
    if (p.has_size_control_ext) append(&split.size_control);
    if (p.has_sync2_ext) append(&split.synchronization2);
  }
  vki.vkGetPhysicalDeviceFeatures2(physical_device, &p.features2);
  if (version < VK_API_VERSION_1_2) {
    p.v11.storageBuffer16BitAccess = split.storage16.storageBuffer16BitAccess;
    p.v12.storageBuffer8BitAccess = split.storage8.storageBuffer8BitAccess;
  }
  if (version < VK_API_VERSION_1_3) {
    p.v13.subgroupSizeControl = split.size_control.subgroupSizeControl;
    p.v13.computeFullSubgroups = split.size_control.computeFullSubgroups;
    p.v13.synchronization2 = split.synchronization2.synchronization2;
  }
  p.features2.pNext = nullptr;  // ProbedDevice is copied: no pointers into it
  p.v11.pNext = p.v12.pNext = p.v13.pNext = p.pipeline_robustness.pNext = nullptr;
}

// Checks that the queue family exists and computes, and reads its timestamp support.
Result<void> read_queue_family(const InstanceFunctions& vki, VkPhysicalDevice physical_device,
                               uint32_t queue_family_index, ProbedDevice& p) {
  uint32_t count = 0;
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
  return {};
}

}  // namespace

Result<ProbedDevice> probe_device(const InstanceFunctions& vki, VkPhysicalDevice physical_device,
                                  uint32_t queue_family_index, uint32_t instance_version) {
  ProbedDevice p;
  vki.vkGetPhysicalDeviceProperties(physical_device, &p.properties);
  if (p.properties.apiVersion < VK_API_VERSION_1_1)
    return make_error(Status::unsupported, "device '", p.properties.deviceName,
                      "' supports only Vulkan 1.0; vkprim needs Vulkan 1.1");
  // Physical-device functionality of a version needs both the device and the instance to have it.
  const uint32_t version = std::min(p.properties.apiVersion, instance_version);
  const bool driver_properties = find_extensions(vki, physical_device, version, p);
  read_properties(vki, physical_device, driver_properties, p);
  read_features(vki, physical_device, version, p);
  if (auto ok = read_queue_family(vki, physical_device, queue_family_index, p); !ok) return ok.error();
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

template <typename M>
struct MemberOf;
template <typename S, typename V>
struct MemberOf<V S::*> {
  using Struct = S;
};

// Feature bit M of the chain struct `s`, which is an M's struct.
template <auto M>
VkBool32 bit(const VkBaseInStructure* s) {
  return reinterpret_cast<const typename MemberOf<decltype(M)>::Struct*>(s)->*M;
}
// Feature bit M of VkPhysicalDeviceFeatures2::features.
template <VkBool32 VkPhysicalDeviceFeatures::*M>
VkBool32 features2_bit(const VkBaseInStructure* s) {
  return reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features.*M;
}

// Which feature bit of which chain struct enables what: a feature is enabled where any of its rows reads
// VK_TRUE (its core struct or its per-extension struct).
struct EnabledBitRow {
  VkStructureType type;
  bool EnabledFeatures::*enabled;
  VkBool32 (*read)(const VkBaseInStructure*);
};
constexpr EnabledBitRow kEnabledBits[] = {
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &EnabledFeatures::int64,
     features2_bit<&VkPhysicalDeviceFeatures::shaderInt64>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &EnabledFeatures::float64,
     features2_bit<&VkPhysicalDeviceFeatures::shaderFloat64>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &EnabledFeatures::storage_16bit,
     bit<&VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &EnabledFeatures::storage_8bit,
     bit<&VkPhysicalDeviceVulkan12Features::storageBuffer8BitAccess>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &EnabledFeatures::subgroup_extended_types,
     bit<&VkPhysicalDeviceVulkan12Features::shaderSubgroupExtendedTypes>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &EnabledFeatures::int64_atomics,
     bit<&VkPhysicalDeviceVulkan12Features::shaderBufferInt64Atomics>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &EnabledFeatures::memory_model,
     bit<&VkPhysicalDeviceVulkan12Features::vulkanMemoryModel>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &EnabledFeatures::memory_model_device_scope,
     bit<&VkPhysicalDeviceVulkan12Features::vulkanMemoryModelDeviceScope>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &EnabledFeatures::subgroup_size_control,
     bit<&VkPhysicalDeviceVulkan13Features::subgroupSizeControl>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &EnabledFeatures::full_subgroups,
     bit<&VkPhysicalDeviceVulkan13Features::computeFullSubgroups>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &EnabledFeatures::sync2,
     bit<&VkPhysicalDeviceVulkan13Features::synchronization2>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, &EnabledFeatures::subgroup_size_control,
     bit<&VkPhysicalDeviceSubgroupSizeControlFeatures::subgroupSizeControl>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, &EnabledFeatures::full_subgroups,
     bit<&VkPhysicalDeviceSubgroupSizeControlFeatures::computeFullSubgroups>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES, &EnabledFeatures::sync2,
     bit<&VkPhysicalDeviceSynchronization2Features::synchronization2>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, &EnabledFeatures::memory_model,
     bit<&VkPhysicalDeviceVulkanMemoryModelFeatures::vulkanMemoryModel>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, &EnabledFeatures::memory_model_device_scope,
     bit<&VkPhysicalDeviceVulkanMemoryModelFeatures::vulkanMemoryModelDeviceScope>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, &EnabledFeatures::storage_16bit,
     bit<&VkPhysicalDevice16BitStorageFeatures::storageBuffer16BitAccess>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES, &EnabledFeatures::storage_8bit,
     bit<&VkPhysicalDevice8BitStorageFeatures::storageBuffer8BitAccess>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES, &EnabledFeatures::int64_atomics,
     bit<&VkPhysicalDeviceShaderAtomicInt64Features::shaderBufferInt64Atomics>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT, &EnabledFeatures::pipeline_robustness,
     bit<&VkPhysicalDevicePipelineRobustnessFeaturesEXT::pipelineRobustness>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
     &EnabledFeatures::pipeline_executable_info,
     bit<&VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR::pipelineExecutableInfo>},
    {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES,
     &EnabledFeatures::subgroup_extended_types,
     bit<&VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures::shaderSubgroupExtendedTypes>},
};

EnabledFeatures read_enabled(const VkPhysicalDeviceFeatures2* head) {
  EnabledFeatures e;
  for (auto* s = reinterpret_cast<const VkBaseInStructure*>(head); s; s = s->pNext)
    for (const EnabledBitRow& row : kEnabledBits)
      if (row.type == s->sType) e.*row.enabled |= row.read(s) == VK_TRUE;
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
const detail::Testing& Context::testing() const { return impl_->testing; }
TileOrder Context::tile_order(uint64_t tiles) const {
  return impl_->launch_order(tiles) ? TileOrder::launch : TileOrder::ticket;
}
VkDevice Context::device() const { return impl_->device; }

namespace detail {

Result<const Kernel*> get_kernel(ContextImpl& c, const KernelDesc& desc) {
  auto key = std::make_tuple(desc.group, desc.kernel, desc.variant, desc.op, desc.workgroup_size, desc.items, desc.spec,
                             desc.uses_subgroups, desc.unchecked_storage);
  std::lock_guard<std::mutex> lock(c.kernel_mutex);
  auto it = c.kernels.find(key);
  if (it != c.kernels.end()) return static_cast<const Kernel*>(it->second.get());
  const uint32_t full = desc.uses_subgroups ? c.full_subgroup_size(desc.workgroup_size) : 0;
  auto built = build_kernel(c.kernel_device(), desc, {full, full && c.pins_largest_subgroup(desc.workgroup_size)});
  if (!built && desc.plan) return make_error(built.status(), desc.plan, ": ", built.error().message);
  if (!built) return std::move(built).error();
  const Kernel* kernel = built.value().get();
  c.kernels.emplace(std::move(key), std::move(built).value());
  return kernel;
}

void destroy_kernels(ContextImpl& c) {
  std::lock_guard<std::mutex> lock(c.kernel_mutex);
  const KernelDevice device = c.kernel_device();
  for (auto& [key, kernel] : c.kernels) destroy_kernel(device, *kernel);
  c.kernels.clear();
}

}  // namespace detail

std::vector<KernelStatistics> Context::kernel_statistics() const {
  std::vector<KernelStatistics> out;
  if (!impl_->capture_statistics) return out;
  std::lock_guard<std::mutex> lock(impl_->kernel_mutex);
  for (const auto& [key, kernel] : impl_->kernels) {
    const detail::KernelDesc& d = kernel->desc;
    // KernelStatistics' kernel-specific fields: a kernel declares at most one constant of each.
    const detail::Specialization& s = d.spec;
    const uint32_t tuning =
        s.look_windows ? s.look_windows : s.subgroup_min ? s.subgroup_min : s.phase ? s.phase : s.channels;
    const uint32_t mode =
        s.key_flags ? s.key_flags : s.mode ? s.mode : s.rejected_order ? s.rejected_order : s.bin_mode;
    out.push_back({d.kernel.name(), detail::variant_label(d), d.workgroup_size, d.items, tuning, mode, s.stage_rounds,
                   kernel->statistics});
  }
  return out;
}

namespace detail {
namespace {

Result<void> check_create_info(const ContextCreateInfo& info) {
  if (!info.instance || !info.physical_device || !info.device || !info.get_instance_proc_addr)
    return make_error(Status::invalid_argument,
                      "ContextCreateInfo needs instance, physical_device, device and get_instance_proc_addr");
  if (info.api_version < VK_API_VERSION_1_1)
    return make_error(Status::unsupported, "vkprim needs an instance created with apiVersion >= 1.1");
  return {};
}

// The caller's handles and options, and the function tables loaded through them.
Result<std::unique_ptr<ContextImpl>> borrow(const ContextCreateInfo& info) {
  auto impl = std::make_unique<ContextImpl>();
  impl->instance = info.instance;
  impl->physical_device = info.physical_device;
  impl->device = info.device;
  impl->queue_family_index = info.queue_family_index;
  impl->get_instance_proc_addr = info.get_instance_proc_addr;
  impl->pipeline_cache = info.pipeline_cache;
  impl->options = info.options;
  impl->testing = info.testing;
  if (const char* missing = impl->vki.load(info.get_instance_proc_addr, info.instance))
    return make_error(Status::unsupported, "instance function ", missing, " is not available");
  if (const char* missing = impl->vk.load(impl->vki.vkGetDeviceProcAddr, info.device))
    return make_error(Status::unsupported, "device function ", missing, " is not available");
  return impl;
}

// What the device is, at the version both it and the instance have.
void describe_device(Capabilities& c, const ProbedDevice& p, uint32_t version) {
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
}

// The limits plans are sized by, lowered where detail::Testing asks, and the queue's timestamps.
void describe_limits(Capabilities& c, const ProbedDevice& p, const Testing& testing) {
  const auto& limits = p.properties.limits;
  c.max_shared_memory = limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
    if (testing.max_workgroups_per_dimension)
      c.max_workgroup_count[i] = std::min(c.max_workgroup_count[i], testing.max_workgroups_per_dimension);
  }
  c.max_storage_buffer_range = limits.maxStorageBufferRange;
  if (testing.max_storage_buffer_range)
    c.max_storage_buffer_range = std::min<VkDeviceSize>(c.max_storage_buffer_range, testing.max_storage_buffer_range);
  c.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;
  c.max_push_constants = limits.maxPushConstantsSize;
  if (p.timestamps) {
    c.features |= feature_timestamps;
    c.timestamp_period_ns = p.timestamp_period;
    c.timestamp_valid_bits = p.timestamp_bits;
  }
}

// Compute units and resident threads per unit from NVIDIA's SM builtins, else AMD's core properties.
void count_compute_units(Capabilities& c, const ProbedDevice& p) {
  if (p.has_sm_builtins && p.sm_builtins.shaderSMCount) {
    c.compute_units = p.sm_builtins.shaderSMCount;
    c.threads_per_compute_unit = p.sm_builtins.shaderWarpsPerSM * 32;
  } else if (p.has_amd_cores && p.amd_cores.computeUnitsPerShaderArray) {
    c.compute_units = p.amd_cores.shaderEngineCount * p.amd_cores.shaderArraysPerEngineCount *
                      p.amd_cores.computeUnitsPerShaderArray;
    c.threads_per_compute_unit = p.amd_cores.simdPerComputeUnit * p.amd_cores.wavefrontsPerSimd * p.amd_cores.wavefrontSize;
  }
}

// Features the caller turns on: the feature bits it enabled in its chain (none for an extension without
// features), usable from core_version on, or below it where it enabled `extension`.
struct EnabledFeatureRow {
  Feature feature;
  bool EnabledFeatures::*enabled;  // nullptr: the extension alone
  bool EnabledFeatures::*also;     // a second feature bit it needs, or nullptr
  uint32_t core_version;           // 0: only through the extension
  const char* extension;           // nullptr: none brings it below core_version
};
constexpr EnabledFeatureRow kEnabledFeatures[] = {
    {feature_int64, &EnabledFeatures::int64, nullptr, VK_API_VERSION_1_0, nullptr},
    {feature_float64, &EnabledFeatures::float64, nullptr, VK_API_VERSION_1_0, nullptr},
    {feature_subgroup_extended_types, &EnabledFeatures::subgroup_extended_types, nullptr, VK_API_VERSION_1_2, nullptr},
    // The enabled bit alone decides: neither the version nor VK_KHR_shader_atomic_int64 is checked.
    {feature_int64_atomics, &EnabledFeatures::int64_atomics, nullptr, VK_API_VERSION_1_0, nullptr},
    {feature_memory_model, &EnabledFeatures::memory_model, &EnabledFeatures::memory_model_device_scope,
     VK_API_VERSION_1_2, nullptr},
    {feature_push_descriptors, nullptr, nullptr, 0, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME},
    {feature_synchronization2, &EnabledFeatures::sync2, nullptr, VK_API_VERSION_1_3,
     VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME},
    // Capturing statistics needs the feature enabled: validation rejects the pipeline flag otherwise.
    {feature_pipeline_statistics, &EnabledFeatures::pipeline_executable_info, nullptr, 0,
     VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME},
    {feature_pipeline_robustness, &EnabledFeatures::pipeline_robustness, nullptr, 0,
     VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME},
    {feature_storage_16bit, &EnabledFeatures::storage_16bit, nullptr, VK_API_VERSION_1_1, nullptr},
    {feature_storage_8bit, &EnabledFeatures::storage_8bit, nullptr, VK_API_VERSION_1_2,
     VK_KHR_8BIT_STORAGE_EXTENSION_NAME},
};

uint32_t enabled_features(const EnabledFeatures& e, uint32_t version, const std::vector<const char*>& ext) {
  uint32_t features = 0;
  for (const EnabledFeatureRow& row : kEnabledFeatures)
    if ((!row.enabled || e.*row.enabled) && (!row.also || e.*row.also) &&
        ((row.core_version && version >= row.core_version) || (row.extension && has_name(ext, row.extension))))
      features |= row.feature;
  return features;
}

// The subgroup features, which the device's subgroup properties decide as well; subgroup size control
// also sets the sizes a pipeline may require.
void add_subgroup_features(Capabilities& c, const ProbedDevice& p, const EnabledFeatures& enabled, uint32_t version,
                           const std::vector<const char*>& ext) {
  const VkSubgroupFeatureFlags needed =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT;
  if ((p.subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (p.subgroup.supportedOperations & needed) == needed &&
      p.subgroup.subgroupSize >= 4)
    c.features |= feature_subgroup_arithmetic;
  const bool size_control_enabled =
      p.has_size_control_ext && enabled.subgroup_size_control && enabled.full_subgroups &&
      (version >= VK_API_VERSION_1_3 || has_name(ext, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) &&
      (p.size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  if (size_control_enabled) {
    c.features |= feature_subgroup_size_control;
    c.min_subgroup_size = p.size_control.minSubgroupSize;
    c.max_subgroup_size = p.size_control.maxSubgroupSize;
    c.max_workgroup_subgroups = p.size_control.maxComputeWorkgroupSubgroups;
  }
  if (has_name(ext, VK_NV_SHADER_SUBGROUP_PARTITIONED_EXTENSION_NAME) &&
      (p.subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
      (p.subgroup.supportedOperations & VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV))
    c.features |= feature_subgroup_partitioned;
}

// Every feature the device has and the caller enabled, as ContextOptions allows, before the test mask.
void add_features(Capabilities& c, const ProbedDevice& p, const ContextCreateInfo& info, uint32_t version,
                  const InstanceFunctions& vki) {
  const EnabledFeatures enabled = read_enabled(info.enabled_features);
  const auto& ext = info.enabled_device_extensions;
  c.features |= enabled_features(enabled, version, ext);
  add_subgroup_features(c, p, enabled, version, ext);
  if (info.options.disable_push_descriptors) c.features &= ~feature_push_descriptors;
  if (info.debug_utils_enabled && vki.vkCmdBeginDebugUtilsLabelEXT && vki.vkCmdEndDebugUtilsLabelEXT)
    c.features |= feature_debug_utils;
}

// Features whose device functions a loader or layer may not expose are dropped without them;
// synchronization2 takes the KHR entry point where the core one is missing.
void require_device_functions(Capabilities& c, DeviceFunctions& vk) {
  if (!vk.vkGetPipelineExecutablePropertiesKHR || !vk.vkGetPipelineExecutableStatisticsKHR)
    c.features &= ~feature_pipeline_statistics;
  if (!vk.vkCmdPushDescriptorSetKHR) c.features &= ~feature_push_descriptors;
  if (c.has(feature_synchronization2) && !vk.vkCmdPipelineBarrier2) {
    vk.vkCmdPipelineBarrier2 = vk.vkCmdPipelineBarrier2KHR;
    if (!vk.vkCmdPipelineBarrier2) c.features &= ~feature_synchronization2;
  }
}

}  // namespace
}  // namespace detail

Result<std::unique_ptr<Context>> Context::create(const ContextCreateInfo& info) {
  if (auto checked = detail::check_create_info(info); !checked) return checked.error();
  auto borrowed = detail::borrow(info);
  if (!borrowed) return std::move(borrowed).error();
  std::unique_ptr<detail::ContextImpl> impl = std::move(borrowed).value();
  auto probed = detail::probe_device(impl->vki, info.physical_device, info.queue_family_index, info.api_version);
  if (!probed) return std::move(probed).error();
  const detail::ProbedDevice& p = probed.value();
  const uint32_t version = std::min(p.properties.apiVersion, info.api_version);

  Capabilities& c = impl->caps;
  detail::describe_device(c, p, version);
  detail::describe_limits(c, p, info.testing);
  detail::count_compute_units(c, p);
  detail::add_features(c, p, info, version, impl->vki);
  c.features &= ~info.testing.mask_features;
  detail::require_device_functions(c, impl->vk);
  if (!c.has(feature_subgroup_size_control)) c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size;

  impl->sync2 = c.has(feature_synchronization2);
  impl->debug_labels = c.has(feature_debug_utils) && info.options.debug_labels;
  impl->capture_statistics = c.has(feature_pipeline_statistics) && info.options.capture_pipeline_statistics;
  return std::unique_ptr<Context>(new Context(std::move(impl)));
}

namespace detail {
namespace {

// The per-extension structs take the features DeviceRequirements holds in its core structs.
void fill_extension_structs(const DeviceRequirements& r, ExtensionFeatureStructs& x) {
  x.storage16.storageBuffer16BitAccess = r.vulkan11.storageBuffer16BitAccess;
  x.storage8.storageBuffer8BitAccess = r.vulkan12.storageBuffer8BitAccess;
  x.memory_model.vulkanMemoryModel = r.vulkan12.vulkanMemoryModel;
  x.memory_model.vulkanMemoryModelDeviceScope = r.vulkan12.vulkanMemoryModelDeviceScope;
  x.atomic_int64.shaderBufferInt64Atomics = r.vulkan12.shaderBufferInt64Atomics;
  x.extended_types.shaderSubgroupExtendedTypes = r.vulkan12.shaderSubgroupExtendedTypes;
  x.size_control.subgroupSizeControl = r.vulkan13.subgroupSizeControl;
  x.size_control.computeFullSubgroups = r.vulkan13.computeFullSubgroups;
  x.synchronization2.synchronization2 = r.vulkan13.synchronization2;
}

// One kind of feature struct vkprim may need: where DeviceRequirements keeps its own, which core version
// replaces it (0: none, the pipeline-robustness struct), whether vkprim wants any of its features, and how
// to OR them into a struct of the same kind in an engine's chain.
struct StructKind {
  VkStructureType type;
  uint32_t core_version;  // the version whose Vulkan1xFeatures struct replaces it; 0 for none
  VkBaseOutStructure* own;
  bool wanted;
  void (*merge)(VkBaseOutStructure* into, const VkBaseOutStructure* from);
};

template <typename T, typename F>
StructKind kind(VkStructureType type, uint32_t core, T& own, bool wanted, F /*merge: a captureless lambda*/) {
  static_assert(std::is_convertible_v<F, void (*)(T&, const T&)>);
  return {type, core, reinterpret_cast<VkBaseOutStructure*>(&own), wanted,
          [](VkBaseOutStructure* into, const VkBaseOutStructure* from) {
            F{}(*reinterpret_cast<T*>(into), *reinterpret_cast<const T*>(from));
          }};
}

std::vector<StructKind> struct_kinds(DeviceRequirements& r) {
  ExtensionFeatureStructs& x = r.extension_structs;
  const VkPhysicalDeviceVulkan12Features& v12 = r.vulkan12;
  const VkPhysicalDeviceVulkan13Features& v13 = r.vulkan13;
  return {
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, VK_API_VERSION_1_1, r.vulkan11,
           r.vulkan11.storageBuffer16BitAccess == VK_TRUE,
           [](VkPhysicalDeviceVulkan11Features& a, const VkPhysicalDeviceVulkan11Features& b) {
             a.storageBuffer16BitAccess |= b.storageBuffer16BitAccess;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, VK_API_VERSION_1_2, r.vulkan12,
           v12.vulkanMemoryModel || v12.shaderBufferInt64Atomics || v12.shaderSubgroupExtendedTypes ||
               v12.storageBuffer8BitAccess,
           [](VkPhysicalDeviceVulkan12Features& a, const VkPhysicalDeviceVulkan12Features& b) {
             a.vulkanMemoryModel |= b.vulkanMemoryModel;
             a.vulkanMemoryModelDeviceScope |= b.vulkanMemoryModelDeviceScope;
             a.shaderBufferInt64Atomics |= b.shaderBufferInt64Atomics;
             a.shaderSubgroupExtendedTypes |= b.shaderSubgroupExtendedTypes;
             a.storageBuffer8BitAccess |= b.storageBuffer8BitAccess;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, VK_API_VERSION_1_3, r.vulkan13,
           v13.subgroupSizeControl || v13.synchronization2,
           [](VkPhysicalDeviceVulkan13Features& a, const VkPhysicalDeviceVulkan13Features& b) {
             a.subgroupSizeControl |= b.subgroupSizeControl;
             a.computeFullSubgroups |= b.computeFullSubgroups;
             a.synchronization2 |= b.synchronization2;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, VK_API_VERSION_1_1, x.storage16,
           x.storage16.storageBuffer16BitAccess == VK_TRUE,
           [](VkPhysicalDevice16BitStorageFeatures& a, const VkPhysicalDevice16BitStorageFeatures& b) {
             a.storageBuffer16BitAccess |= b.storageBuffer16BitAccess;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES, VK_API_VERSION_1_2, x.storage8,
           x.storage8.storageBuffer8BitAccess == VK_TRUE,
           [](VkPhysicalDevice8BitStorageFeatures& a, const VkPhysicalDevice8BitStorageFeatures& b) {
             a.storageBuffer8BitAccess |= b.storageBuffer8BitAccess;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, VK_API_VERSION_1_2, x.memory_model,
           x.memory_model.vulkanMemoryModel == VK_TRUE,
           [](VkPhysicalDeviceVulkanMemoryModelFeatures& a, const VkPhysicalDeviceVulkanMemoryModelFeatures& b) {
             a.vulkanMemoryModel |= b.vulkanMemoryModel;
             a.vulkanMemoryModelDeviceScope |= b.vulkanMemoryModelDeviceScope;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES, VK_API_VERSION_1_2, x.atomic_int64,
           x.atomic_int64.shaderBufferInt64Atomics == VK_TRUE,
           [](VkPhysicalDeviceShaderAtomicInt64Features& a, const VkPhysicalDeviceShaderAtomicInt64Features& b) {
             a.shaderBufferInt64Atomics |= b.shaderBufferInt64Atomics;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES, VK_API_VERSION_1_2,
           x.extended_types, x.extended_types.shaderSubgroupExtendedTypes == VK_TRUE,
           [](VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures& a,
              const VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures& b) {
             a.shaderSubgroupExtendedTypes |= b.shaderSubgroupExtendedTypes;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, VK_API_VERSION_1_3, x.size_control,
           x.size_control.subgroupSizeControl == VK_TRUE,
           [](VkPhysicalDeviceSubgroupSizeControlFeatures& a, const VkPhysicalDeviceSubgroupSizeControlFeatures& b) {
             a.subgroupSizeControl |= b.subgroupSizeControl;
             a.computeFullSubgroups |= b.computeFullSubgroups;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES, VK_API_VERSION_1_3, x.synchronization2,
           x.synchronization2.synchronization2 == VK_TRUE,
           [](VkPhysicalDeviceSynchronization2Features& a, const VkPhysicalDeviceSynchronization2Features& b) {
             a.synchronization2 |= b.synchronization2;
           }),
      kind(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT, 0, r.pipeline_robustness,
           r.pipeline_robustness.pipelineRobustness == VK_TRUE,
           [](VkPhysicalDevicePipelineRobustnessFeaturesEXT& a, const VkPhysicalDevicePipelineRobustnessFeaturesEXT& b) {
             a.pipelineRobustness |= b.pipelineRobustness;
           }),
  };
}

// The core version whose Vulkan1xFeatures struct replaces a per-extension struct of an engine's chain,
// vkprim's kinds and the others alike (VUID-VkDeviceCreateInfo-pNext-02829, -02830, -06532); 0 for none.
uint32_t replaced_by(VkStructureType t) {
  switch (t) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTIVIEW_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VARIABLE_POINTERS_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROTECTED_MEMORY_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SAMPLER_YCBCR_CONVERSION_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_DRAW_PARAMETERS_FEATURES:
      return VK_API_VERSION_1_1;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGELESS_FRAMEBUFFER_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SEPARATE_DEPTH_STENCIL_LAYOUTS_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
      return VK_API_VERSION_1_2;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES:
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES:
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
      return VK_API_VERSION_1_3;
    default:
      return 0;
  }
}

// Bit 1 << v for the Vulkan 1.v core features struct, 0 for any other struct.
uint32_t core_bit(VkStructureType t) {
  switch (t) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES: return 1u << 1;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: return 1u << 2;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: return 1u << 3;
    default: return 0;
  }
}

// Which structs carry vkprim's features for a device of api_version whose chain holds the core structs of
// the versions in `core` and per-extension structs of the versions in `split` (bit 1 << v for 1.v): the
// core struct of a version where the chain has it, or where the device has it (Vulkan11Features and
// Vulkan12Features came with 1.2, Vulkan13Features with 1.3) and the chain has no per-extension struct of
// that version; otherwise that version's per-extension structs.
bool uses_struct(const StructKind& k, uint32_t api_version, uint32_t core, uint32_t split) {
  if (!k.core_version) return true;
  const uint32_t bit = 1u << VK_API_VERSION_MINOR(k.core_version);
  const bool core_usable =
      (core & bit) || (api_version >= std::max(k.core_version, VK_API_VERSION_1_2) && !(split & bit));
  return (core_bit(k.type) != 0) == core_usable;
}

}  // namespace
}  // namespace detail

VkPhysicalDeviceFeatures2* DeviceRequirements::features() {
  detail::fill_extension_structs(*this, extension_structs);
  features2.pNext = nullptr;
  VkBaseOutStructure* last = reinterpret_cast<VkBaseOutStructure*>(&features2);
  for (const detail::StructKind& k : detail::struct_kinds(*this)) {
    k.own->pNext = nullptr;
    // Core structs of the versions api_version has link even when empty; others only when wanted.
    if (!detail::uses_struct(k, api_version, 0, 0) || (!detail::core_bit(k.type) && !k.wanted)) continue;
    last->pNext = k.own;
    last = k.own;
  }
  return &features2;
}

Result<void> DeviceRequirements::merge_into(VkPhysicalDeviceFeatures2& chain, std::vector<const char*>& engine_extensions) {
  detail::fill_extension_structs(*this, extension_structs);
  std::vector<detail::StructKind> kinds = detail::struct_kinds(*this);
  // What the chain holds, before anything is written.
  uint32_t core = 0, split = 0;  // bit v: the chain has the core / a per-extension struct of version 1.v
  VkBaseOutStructure* last = reinterpret_cast<VkBaseOutStructure*>(&chain);
  for (auto* s = reinterpret_cast<VkBaseOutStructure*>(&chain); s; s = s->pNext) {
    last = s;
    core |= detail::core_bit(s->sType);
    if (uint32_t v = detail::replaced_by(s->sType)) split |= 1u << VK_API_VERSION_MINOR(v);
  }
  chain.features.shaderInt64 |= features2.features.shaderInt64;
  chain.features.shaderFloat64 |= features2.features.shaderFloat64;
  for (const detail::StructKind& k : kinds) {
    if (!k.wanted || !detail::uses_struct(k, api_version, core, split)) continue;
    VkBaseOutStructure* found = nullptr;
    for (auto* s = reinterpret_cast<VkBaseOutStructure*>(&chain); s && !found; s = s->pNext)
      if (s->sType == k.type) found = s;
    if (found) {
      k.merge(found, k.own);
    } else {
      k.own->pNext = nullptr;
      last->pNext = k.own;
      last = k.own;
    }
  }
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
  auto probed = detail::probe_device(vki, physical_device, 0, instance_api_version);
  if (!probed && probed.status() != Status::invalid_argument) return std::move(probed).error();
  // Queue family 0 may lack compute; features do not depend on it, so probe again without that check.
  detail::ProbedDevice p;
  if (probed) {
    p = probed.value();
  } else {
    for (uint32_t i = 1; i < family_count && !probed; ++i) probed = detail::probe_device(vki, physical_device, i, instance_api_version);
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
  // The probe read these at the effective version, through their per-extension structs below 1.2 / 1.3;
  // below those versions the extensions go into the list (features() links the structs).
  const bool v12 = r.api_version >= VK_API_VERSION_1_2, v13 = r.api_version >= VK_API_VERSION_1_3;
  r.vulkan11.storageBuffer16BitAccess = p.v11.storageBuffer16BitAccess;  // u16 sort keys
  if (p.has_8bit_storage_ext) {  // u8 sort keys
    r.vulkan12.storageBuffer8BitAccess = p.v12.storageBuffer8BitAccess;
    if (!v12 && r.vulkan12.storageBuffer8BitAccess) r.extensions.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  }
  if (p.has_size_control_ext && p.v13.subgroupSizeControl && p.v13.computeFullSubgroups) {
    r.vulkan13.subgroupSizeControl = VK_TRUE;
    r.vulkan13.computeFullSubgroups = VK_TRUE;
    if (!v13) r.extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  }
  if (p.has_sync2_ext && p.v13.synchronization2) {
    r.vulkan13.synchronization2 = VK_TRUE;
    if (!v13) r.extensions.push_back(VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME);
  }
  // The kernels that use these are SPIR-V 1.5 (Vulkan 1.2): below 1.2 they stay off.
  if (v12) {
    r.vulkan12.shaderSubgroupExtendedTypes = p.v12.shaderSubgroupExtendedTypes;
    r.vulkan12.shaderBufferInt64Atomics = p.v12.shaderBufferInt64Atomics;
    r.vulkan12.vulkanMemoryModel = p.v12.vulkanMemoryModel;
    r.vulkan12.vulkanMemoryModelDeviceScope = p.v12.vulkanMemoryModelDeviceScope;
  }
  return r;
}

}  // namespace vkprim
