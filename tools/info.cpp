#include <cstdio>

#include "commands.hpp"
#include "vkprim/reduce.hpp"

namespace vkprim::tools {

namespace {

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

}  // namespace

int run_info(std::vector<std::string> args) {
  auto devices = Device::enumerate();
  if (!devices) {
    std::fprintf(stderr, "vkprim info: %s\n", devices.error().message.c_str());
    return 1;
  }
  std::printf("Vulkan devices:\n");
  for (const auto& d : devices.value())
    std::printf("  [%u] %s (%s, Vulkan %u.%u.%u)\n", d.index, d.name.c_str(), type_name(d.type),
                VK_API_VERSION_MAJOR(d.api_version), VK_API_VERSION_MINOR(d.api_version),
                VK_API_VERSION_PATCH(d.api_version));
  auto device = open_device(args);
  if (!device) return 1;
  const Capabilities& c = device->context().capabilities();
  auto yes = [&](uint32_t f) { return c.has(f) ? "yes" : "no"; };
  std::printf("chosen: %s (%s), driver %s %s, Vulkan %u.%u\n", c.device_name.c_str(), type_name(c.device_type),
              c.driver_name.c_str(), c.driver_info.c_str(), VK_API_VERSION_MAJOR(c.api_version),
              VK_API_VERSION_MINOR(c.api_version));
  std::printf("  subgroup size %u (min %u, max %u), arithmetic in compute: %s, size control: %s, partitioned: %s\n",
              c.subgroup_size, c.min_subgroup_size, c.max_subgroup_size, yes(feature_subgroup_arithmetic),
              yes(feature_subgroup_size_control), yes(feature_subgroup_partitioned));
  std::printf("  shared memory %u B, workgroup invocations %u, workgroup count %u x %u x %u\n", c.max_shared_memory,
              c.max_workgroup_invocations, c.max_workgroup_count[0], c.max_workgroup_count[1], c.max_workgroup_count[2]);
  std::printf("  maxStorageBufferRange %llu B, minStorageBufferOffsetAlignment %llu B, push constants %u B\n",
              (unsigned long long)c.max_storage_buffer_range, (unsigned long long)c.min_storage_buffer_offset_alignment,
              c.max_push_constants);
  std::printf("  int64 %s, float64 %s, subgroup int64 %s, int64 atomics %s, memory model %s\n", yes(feature_int64),
              yes(feature_float64), yes(feature_subgroup_extended_types), yes(feature_int64_atomics),
              yes(feature_memory_model));
  std::printf("  push descriptors %s, synchronization2 %s, debug labels %s, timestamps %s (%.3f ns/tick), "
              "pipeline robustness %s\n",
              yes(feature_push_descriptors), yes(feature_synchronization2), yes(feature_debug_utils),
              yes(feature_timestamps), c.timestamp_period_ns, yes(feature_pipeline_robustness));
  auto reduce = Reduce::create(device->context(), ReduceDesc{DataType::u32, Op::add, 1u << 20});
  std::printf("automatic picks: reduce %s\n", reduce ? to_string(reduce->algorithm()) : reduce.error().message.c_str());
  return 0;
}

}  // namespace vkprim::tools
