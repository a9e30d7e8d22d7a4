// vkprim_pipeline_probe: compiles SPIR-V compute shaders on the first Vulkan device under given
// specialization constants WG_SIZE, ITEMS and SUBGROUP_MIN (IDs 0, 1, 7: common/config.glsl) and prints
// the driver's statistics (VK_KHR_pipeline_executable_properties: registers, shared memory, ...). With
// --cache it also writes each pipeline's VkPipelineCache data next to the SPIR-V (<file>.cache), from which
// scripts/nv-sass extracts NVIDIA's machine code. A diagnostic for kernel variants built by hand with
// glslangValidator (no runtime, no dispatch); --no-robustness builds them with storage-buffer robustness
// disabled (VK_EXT_pipeline_robustness); --rounds=N sets STAGE_ROUNDS (4), --key-flags=N the sort's KEY_FLAGS
// (3), --mode=N the keyed primitives' MODE (9), --phase=N the phase of a multi-phase kernel (PHASE, 8); --suc
// enables VK_KHR_shader_subgroup_uniform_control_flow, for modules built with the
// SubgroupUniformControlFlowKHR execution mode. Usage
//   vkprim_pipeline_probe [--cache] [--no-robustness] [--suc] [--rounds=N] [--key-flags=N] [--mode=N]
//                         [--phase=N] WG ITEMS SUBGROUP file.spv...
#include <vulkan/vulkan.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

bool ok(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return true;
  std::fprintf(stderr, "%s failed: VkResult %d\n", what, int(r));
  return false;
}

void print_statistics(VkDevice device, VkPipeline pipeline, PFN_vkGetPipelineExecutablePropertiesKHR properties,
                      PFN_vkGetPipelineExecutableStatisticsKHR statistics) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t executables = 0;
  properties(device, &info, &executables, nullptr);
  for (uint32_t e = 0; e < executables; ++e) {
    VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    executable.pipeline = pipeline;
    executable.executableIndex = e;
    uint32_t n = 0;
    statistics(device, &executable, &n, nullptr);
    std::vector<VkPipelineExecutableStatisticKHR> values(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    statistics(device, &executable, &n, values.data());
    for (const auto& s : values) {
      if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR)
        std::printf(" %s=%" PRIu64 ";", s.name, s.value.u64);
      else if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR)
        std::printf(" %s=%" PRId64 ";", s.name, s.value.i64);
      else if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR)
        std::printf(" %s=%s;", s.name, s.value.b32 ? "true" : "false");
      else if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR)
        std::printf(" %s=%g;", s.name, s.value.f64);
    }
  }
  std::printf("\n");
}



struct Options {
  bool write_cache = false, no_robustness = false, suc = false;
  // WG_SIZE, ITEMS, SUBGROUP_MIN, KEY_FLAGS, STAGE_ROUNDS, MODE and PHASE, mapped in probe_file to their IDs
  // (src/kernel_info.hpp); a kernel ignores those it does not declare.
  uint32_t spec[7] = {0, 0, 0, 0, 1, 0, 0};
  int first_file = 0;  // argv index of the first SPIR-V file
};

// The flags, then WG ITEMS SUBGROUP and at least one file; false (after the usage) otherwise.
bool parse_options(int argc, char** argv, Options& o) {
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; ++first) {
    o.write_cache |= std::strcmp(argv[first], "--cache") == 0;
    o.no_robustness |= std::strcmp(argv[first], "--no-robustness") == 0;
    o.suc |= std::strcmp(argv[first], "--suc") == 0;
    if (std::strncmp(argv[first], "--rounds=", 9) == 0) o.spec[4] = uint32_t(std::atoi(argv[first] + 9));
    if (std::strncmp(argv[first], "--key-flags=", 12) == 0) o.spec[3] = uint32_t(std::atoi(argv[first] + 12));
    if (std::strncmp(argv[first], "--mode=", 7) == 0) o.spec[5] = uint32_t(std::atoi(argv[first] + 7));
    if (std::strncmp(argv[first], "--phase=", 8) == 0) o.spec[6] = uint32_t(std::atoi(argv[first] + 8));
  }
  if (argc < first + 4) {
    std::fprintf(stderr,
                 "usage: vkprim_pipeline_probe [--cache] [--no-robustness] [--suc] [--rounds=N] [--key-flags=N] "
                 "[--mode=N] [--phase=N] WG ITEMS SUBGROUP file.spv...\n");
    return false;
  }
  for (int i = 0; i < 3; ++i) o.spec[i] = uint32_t(std::atoi(argv[first + i]));
  o.first_file = first + 3;
  return true;
}

// A device with the features the sort kernels declare (memory model, 64-bit integers, subgroup size control,
// 8- and 16-bit storage for u8 and u16 keys) and pipeline statistics; VK_NULL_HANDLE after a message.
VkDevice create_device(VkPhysicalDevice physical, const Options& o) {
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  executable_info.pipelineExecutableInfo = VK_TRUE;
  // --no-robustness: VK_EXT_pipeline_robustness, storage buffers without bounds behaviour.
  VkPhysicalDevicePipelineRobustnessFeaturesEXT robustness_feature{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
  robustness_feature.pipelineRobustness = VK_TRUE;
  if (o.no_robustness) executable_info.pNext = &robustness_feature;
  VkPhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR suc_feature{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_FEATURES_KHR};
  suc_feature.shaderSubgroupUniformControlFlow = VK_TRUE;
  if (o.suc) {
    suc_feature.pNext = executable_info.pNext;
    executable_info.pNext = &suc_feature;
  }
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.subgroupSizeControl = VK_TRUE;
  f13.computeFullSubgroups = VK_TRUE;
  f13.pNext = &executable_info;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.vulkanMemoryModel = VK_TRUE;
  f12.vulkanMemoryModelDeviceScope = VK_TRUE;
  f12.storageBuffer8BitAccess = VK_TRUE;
  f12.pNext = &f13;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.storageBuffer16BitAccess = VK_TRUE;
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderInt64 = VK_TRUE;
  features.pNext = &f11;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  std::vector<const char*> extensions = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
  if (o.no_robustness) extensions.push_back(VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME);
  if (o.suc) extensions.push_back(VK_KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_EXTENSION_NAME);
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue;
  device_info.enabledExtensionCount = uint32_t(extensions.size());
  device_info.ppEnabledExtensionNames = extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  if (!ok(vkCreateDevice(physical, &device_info, nullptr, &device), "vkCreateDevice")) return VK_NULL_HANDLE;
  return device;
}

// A layout that fits every kernel: eight storage buffers and 128 bytes of push constants; VK_NULL_HANDLE after
// a message.
VkPipelineLayout create_layout(VkDevice device, VkDescriptorSetLayout& set_layout) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(8);
  for (uint32_t b = 0; b < 8; ++b)
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = uint32_t(bindings.size());
  set_info.pBindings = bindings.data();
  if (!ok(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout), "vkCreateDescriptorSetLayout"))
    return VK_NULL_HANDLE;
  const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  if (!ok(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout"))
    return VK_NULL_HANDLE;
  return layout;
}

// One SPIR-V file as the runtime builds it (the subgroup size pinned, full subgroups): its statistics printed
// and, with --cache, its pipeline cache data written next to it. 0, 1 where it failed, -1 where the probe
// cannot go on.
int probe_file(VkDevice device, VkPipelineLayout layout, const char* path, const Options& o,
               PFN_vkGetPipelineExecutablePropertiesKHR get_properties,
               PFN_vkGetPipelineExecutableStatisticsKHR get_statistics) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> code((std::istreambuf_iterator<char>(in)), {});
  if (code.empty() || code.size() % 4 != 0) {
    std::fprintf(stderr, "%s: not a SPIR-V file\n", path);
    return 1;
  }
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = code.size();
  module_info.pCode = reinterpret_cast<const uint32_t*>(code.data());
  VkShaderModule module;
  if (!ok(vkCreateShaderModule(device, &module_info, nullptr, &module), "vkCreateShaderModule")) return 1;
  const VkSpecializationMapEntry entries[7] = {{0, 0, 4},   {1, 4, 4},   {7, 8, 4}, {3, 12, 4},
                                               {4, 16, 4}, {9, 20, 4}, {8, 24, 4}};
  const VkSpecializationInfo specialization{7, entries, sizeof(o.spec), o.spec};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup.requiredSubgroupSize = o.spec[2];
  VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pipeline_info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  pipeline_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, &subgroup,
                         VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT, VK_SHADER_STAGE_COMPUTE_BIT,
                         module, "main", &specialization};
  pipeline_info.layout = layout;
  VkPipelineRobustnessCreateInfoEXT robustness{VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT};
  robustness.storageBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT;
  robustness.uniformBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT;
  robustness.vertexInputs = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT_EXT;
  robustness.images = VK_PIPELINE_ROBUSTNESS_IMAGE_BEHAVIOR_DEVICE_DEFAULT_EXT;
  if (o.no_robustness) pipeline_info.pNext = &robustness;
  // A cache of its own per pipeline, so that its data holds this pipeline's code alone.
  VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkPipelineCache cache;
  if (!ok(vkCreatePipelineCache(device, &cache_info, nullptr, &cache), "vkCreatePipelineCache")) {
    vkDestroyShaderModule(device, module, nullptr);
    return -1;
  }
  int status = 0;
  VkPipeline pipeline;
  if (!ok(vkCreateComputePipelines(device, cache, 1, &pipeline_info, nullptr, &pipeline), path)) {
    status = 1;
  } else {
    std::printf("%s:", path);
    print_statistics(device, pipeline, get_properties, get_statistics);
    if (o.write_cache) {
      size_t size = 0;
      vkGetPipelineCacheData(device, cache, &size, nullptr);
      std::vector<char> data(size);
      vkGetPipelineCacheData(device, cache, &size, data.data());
      std::ofstream(std::string(path) + ".cache", std::ios::binary).write(data.data(), std::streamsize(size));
    }
    vkDestroyPipeline(device, pipeline, nullptr);
  }
  vkDestroyPipelineCache(device, cache, nullptr);
  vkDestroyShaderModule(device, module, nullptr);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pApplicationInfo = &app;
  VkInstance instance;
  if (!ok(vkCreateInstance(&instance_info, nullptr, &instance), "vkCreateInstance")) return 1;
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  if (count == 0) {
    std::fprintf(stderr, "no Vulkan device\n");
    return 1;
  }
  std::vector<VkPhysicalDevice> physical(count);
  vkEnumeratePhysicalDevices(instance, &count, physical.data());
  VkPhysicalDeviceProperties properties;
  vkGetPhysicalDeviceProperties(physical[0], &properties);
  std::printf("device %s, driver version %u\n", properties.deviceName, properties.driverVersion);
  const VkDevice device = create_device(physical[0], o);
  if (device == VK_NULL_HANDLE) return 1;
  auto get_properties = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutablePropertiesKHR"));
  auto get_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutableStatisticsKHR"));
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  const VkPipelineLayout layout = create_layout(device, set_layout);
  if (layout == VK_NULL_HANDLE) return 1;
  int status = 0;
  for (int a = o.first_file; a < argc; ++a) {
    const int probed = probe_file(device, layout, argv[a], o, get_properties, get_statistics);
    if (probed < 0) return 1;
    status |= probed;
  }
  vkDestroyPipelineLayout(device, layout, nullptr);
  vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
  vkDestroyDevice(device, nullptr);
  vkDestroyInstance(instance, nullptr);
  return status;
}
