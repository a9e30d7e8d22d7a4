// Pipelines are created when a plan is created (never while recording) and shared through the context.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "errors.hpp"
#include "kernel.hpp"
#include "shader_registry.hpp"

namespace vkprim::detail {

void destroy_kernel(const KernelDevice& c, Kernel& k) {
  if (k.pipeline) c.vk.vkDestroyPipeline(c.device, k.pipeline, nullptr);
  if (k.layout) c.vk.vkDestroyPipelineLayout(c.device, k.layout, nullptr);
  if (k.set_layout) c.vk.vkDestroyDescriptorSetLayout(c.device, k.set_layout, nullptr);
}

namespace {

std::string statistic_text(const VkPipelineExecutableStatisticKHR& s) {
  char text[64];
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
      return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
      std::snprintf(text, sizeof(text), "%" PRId64, s.value.i64);
      return text;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
      std::snprintf(text, sizeof(text), "%" PRIu64, s.value.u64);
      return text;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
      std::snprintf(text, sizeof(text), "%g", s.value.f64);
      return text;
    default:
      return "?";  // a format newer than these headers
  }
}

// The driver's statistics for every executable of `pipeline` (one for a compute pipeline on most drivers).
// They are diagnostics only: a query that fails leaves them empty instead of failing the plan.
std::vector<std::pair<std::string, std::string>> read_statistics(const KernelDevice& c, VkPipeline pipeline) {
  std::vector<std::pair<std::string, std::string>> out;
  VkPipelineInfoKHR pipeline_info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pipeline_info.pipeline = pipeline;
  uint32_t count = 0;
  if (c.vk.vkGetPipelineExecutablePropertiesKHR(c.device, &pipeline_info, &count, nullptr) != VK_SUCCESS) return out;
  std::vector<VkPipelineExecutablePropertiesKHR> executables(
      count, VkPipelineExecutablePropertiesKHR{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  if (c.vk.vkGetPipelineExecutablePropertiesKHR(c.device, &pipeline_info, &count, executables.data()) != VK_SUCCESS)
    return out;
  for (uint32_t e = 0; e < count; ++e) {
    VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    executable.pipeline = pipeline;
    executable.executableIndex = e;
    uint32_t n = 0;
    if (c.vk.vkGetPipelineExecutableStatisticsKHR(c.device, &executable, &n, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> stats(
        n, VkPipelineExecutableStatisticKHR{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (c.vk.vkGetPipelineExecutableStatisticsKHR(c.device, &executable, &n, stats.data()) != VK_SUCCESS) continue;
    // Names alone are ambiguous when one pipeline has several executables (several shader stages or passes).
    const std::string prefix = count > 1 ? std::string(executables[e].name) + ": " : std::string();
    for (uint32_t i = 0; i < n; ++i) out.emplace_back(prefix + stats[i].name, statistic_text(stats[i]));
  }
  return out;
}

// The kernel's SPIR-V, as embedded in the library.
Result<std::vector<uint32_t>> embedded_spirv(const KernelDesc& desc) {
  const ShaderVariant* shader = desc.group ? find_shader(*desc.group, desc.kernel.name(), desc.variant) : nullptr;
  if (!shader)
    return make_error(Status::unsupported, "kernel '", desc.kernel.name(), "' has no embedded variant '",
                      desc.variant, "' (VKPRIM_TYPES chooses the element types built into the library)");
  std::vector<uint32_t> words;
  if (!unpack_shader(*desc.group, *shader, words))
    return make_error(Status::vulkan_error, "the embedded SPIR-V of kernel '", desc.kernel.name(), "' [",
                      desc.variant, "] is corrupt");
  return words;
}

Result<void> check_limits(const Capabilities& caps, const KernelDesc& desc) {
  if (desc.workgroup_size == 0 || desc.workgroup_size > caps.max_workgroup_size[0] ||
      desc.workgroup_size > caps.max_workgroup_invocations)
    return make_error(Status::unsupported, "workgroup size ", desc.workgroup_size, " exceeds the device's limit of ",
                      std::min(caps.max_workgroup_size[0], caps.max_workgroup_invocations));
  if (desc.kernel.push_bytes() > caps.max_push_constants)
    return make_error(Status::unsupported, "kernel needs ", desc.kernel.push_bytes(),
                      " bytes of push constants; device has ", caps.max_push_constants);
  return {};
}

// A constant the kernel does not declare would be ignored by the driver without a word: a fault of the plan
// or of shaders/kernels.cmake's SPEC, reported instead.
Result<void> check_constants(const KernelDesc& desc) {
  const char* stray = nullptr;
  if (desc.op && !desc.kernel.declares(SpecId::vk_op)) stray = kSpecNames[uint32_t(SpecId::vk_op)];
  for (const Specialization::Constant& c : desc.spec.constants())
    if (c.value && !desc.kernel.declares(c.id)) stray = kSpecNames[uint32_t(c.id)];
  if (stray)
    return make_error(Status::unsupported, "vkprim sets specialization constant ", stray, " of kernel ",
                      desc.kernel.name(), ", which declares none (an internal error)");
  return {};
}

// Releases what was built so far and says which call failed for which kernel.
Error build_failed(const KernelDevice& c, Kernel& kernel, VkResult r, const char* what) {
  destroy_kernel(c, kernel);
  return vk_error(r, what, " for kernel ", kernel.desc.kernel.name(), " [", variant_label(kernel.desc), "]");
}

// The kernel's storage buffers at set 0, pushed where the context uses push descriptors.
VkResult create_set_layout(const KernelDevice& c, Kernel& kernel) {
  const uint32_t count = kernel.desc.kernel.bindings();
  std::vector<VkDescriptorSetLayoutBinding> bindings(count);
  for (uint32_t i = 0; i < count; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.flags = kernel.push_descriptors ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
  set_info.bindingCount = count;
  set_info.pBindings = bindings.data();
  return c.vk.vkCreateDescriptorSetLayout(c.device, &set_info, nullptr, &kernel.set_layout);
}

VkResult create_pipeline_layout(const KernelDevice& c, Kernel& kernel) {
  const uint32_t push_bytes = kernel.desc.kernel.push_bytes();
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &kernel.set_layout;
  layout_info.pushConstantRangeCount = push_bytes ? 1 : 0;
  layout_info.pPushConstantRanges = &push;
  return c.vk.vkCreatePipelineLayout(c.device, &layout_info, nullptr, &kernel.layout);
}

VkResult create_module(const KernelDevice& c, const std::vector<uint32_t>& words, VkShaderModule& module) {
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = words.size() * 4;
  module_info.pCode = words.data();
  return c.vk.vkCreateShaderModule(c.device, &module_info, nullptr, &module);
}

// Every constant by ID (SpecId), each value at offset 4 * ID. WG_SIZE and ITEMS are always passed; the
// others only when set, so 0 keeps the shader's own default. VK_OP takes vkprim::Op's value
// (common/types.glsl numbers the operators the same way).
struct SpecializationData {
  uint32_t values[kSpecIds] = {};
  VkSpecializationMapEntry entries[kSpecIds] = {};
  uint32_t count = 0;
  VkSpecializationInfo info() const { return {count, entries, sizeof(values), values}; }
};

SpecializationData specialization(const KernelDesc& desc) {
  static_assert(uint32_t(Op::add) == 0 && uint32_t(Op::min) == 1 && uint32_t(Op::max) == 2 &&
                uint32_t(Op::bit_and) == 3 && uint32_t(Op::bit_or) == 4 && uint32_t(Op::bit_xor) == 5);
  SpecializationData s;
  bool passed[kSpecIds] = {};
  auto set = [&](SpecId id, uint32_t value) {
    s.values[uint32_t(id)] = value;
    passed[uint32_t(id)] = true;
  };
  set(SpecId::wg_size, desc.workgroup_size);
  set(SpecId::items, desc.items);
  if (desc.op) set(SpecId::vk_op, uint32_t(*desc.op));
  for (const Specialization::Constant& c : desc.spec.constants())
    if (c.value) set(c.id, c.value);
  for (uint32_t id = 0; id < kSpecIds; ++id)
    if (passed[id]) s.entries[s.count++] = {id, 4 * id, 4};
  return s;
}

VkResult create_pipeline(const KernelDevice& c, Kernel& kernel, VkShaderModule module, KernelSubgroups subgroups) {
  const KernelDesc& desc = kernel.desc;
  const SpecializationData constants = specialization(desc);
  const VkSpecializationInfo spec = constants.info();
  VkComputePipelineCreateInfo pipe_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pipe_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  pipe_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipe_info.stage.module = module;
  pipe_info.stage.pName = "main";
  pipe_info.stage.pSpecializationInfo = &spec;
  pipe_info.layout = kernel.layout;
  // NVIDIA's driver bounds-checks every storage-buffer access unless told otherwise, robustBufferAccess or
  // not (a compare and a predicate per access in the SASS: onesweep 2183 -> 2063 instructions).
  VkPipelineRobustnessCreateInfoEXT robustness{VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT};
  robustness.storageBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT;
  robustness.uniformBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT_EXT;
  robustness.vertexInputs = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT_EXT;
  robustness.images = VK_PIPELINE_ROBUSTNESS_IMAGE_BEHAVIOR_DEVICE_DEFAULT_EXT;
  if (desc.unchecked_storage && c.caps.has(feature_pipeline_robustness)) pipe_info.pNext = &robustness;
  if (c.capture_statistics) pipe_info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  // Full subgroups of the size the plans chose the variant for (ContextImpl::full_subgroup_size).
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  if (subgroups.full) {
    pipe_info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    if (subgroups.pinned) {
      required.requiredSubgroupSize = subgroups.full;
      pipe_info.stage.pNext = &required;
    }
  }
  return c.vk.vkCreateComputePipelines(c.device, c.pipeline_cache, 1, &pipe_info, nullptr, &kernel.pipeline);
}


}  // namespace

Result<std::unique_ptr<Kernel>> build_kernel(const KernelDevice& c, const KernelDesc& desc, KernelSubgroups subgroups) {
  auto words = embedded_spirv(desc);
  if (!words) return std::move(words).error();
  if (auto fits = check_limits(c.caps, desc); !fits) return fits.error();
  if (auto declared = check_constants(desc); !declared) return declared.error();

  auto kernel = std::make_unique<Kernel>(Kernel{desc});
  kernel->push_descriptors = c.push_descriptors;
  if (VkResult r = create_set_layout(c, *kernel); r != VK_SUCCESS)
    return build_failed(c, *kernel, r, "vkCreateDescriptorSetLayout");
  if (VkResult r = create_pipeline_layout(c, *kernel); r != VK_SUCCESS)
    return build_failed(c, *kernel, r, "vkCreatePipelineLayout");
  VkShaderModule module = VK_NULL_HANDLE;
  if (VkResult r = create_module(c, words.value(), module); r != VK_SUCCESS)
    return build_failed(c, *kernel, r, "vkCreateShaderModule");
  const VkResult r = create_pipeline(c, *kernel, module, subgroups);
  c.vk.vkDestroyShaderModule(c.device, module, nullptr);
  if (r != VK_SUCCESS) return build_failed(c, *kernel, r, "vkCreateComputePipelines");
  if (c.capture_statistics) kernel->statistics = read_statistics(c, kernel->pipeline);
  return kernel;
}

std::string variant_label(const KernelDesc& desc) {
  const std::string op = desc.op ? std::string(".") + to_string(*desc.op) : std::string();
  if (op.empty() || desc.variant.find(op) != std::string::npos) return desc.variant;  // "f32.min" has it
  const size_t dot = desc.variant.find('.');
  return dot == std::string::npos ? desc.variant + op : desc.variant.substr(0, dot) + op + desc.variant.substr(dot);
}

}  // namespace vkprim::detail
