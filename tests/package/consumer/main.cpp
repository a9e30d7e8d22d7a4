// An outside "engine" using volk: it creates its own VkInstance and VkDevice, borrows them to vkprim,
// reduces 100000 u32 values in its own command buffer with its own buffers, and checks that vkprim
// left volk's global function pointers alone; first, that vkprim::version() matches the headers' version
// macros, and (built with VKPRIM_TYPES=u32, CONSUMER_U32_ONLY) that a plan of another type is refused.
// Exit 0 on success; otherwise prints what failed.
#include <volk.h>  // first: volk defines VK_NO_PROTOTYPES before the Vulkan headers are seen

#include <vkprim/vkprim.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

#define CHECK_VK(expr)                                                                   \
  do {                                                                                   \
    VkResult r_ = (expr);                                                                \
    if (r_ != VK_SUCCESS) {                                                              \
      std::fprintf(stderr, "FAILED: %s returned VkResult %d (line %d)\n", #expr, int(r_), \
                   __LINE__);                                                            \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

// volk's global pointers the engine relies on; vkprim must not change any of them.
struct VolkSnapshot {
  PFN_vkCmdDispatch cmd_dispatch;
  PFN_vkCmdPipelineBarrier cmd_pipeline_barrier;
  PFN_vkCmdBindPipeline cmd_bind_pipeline;
  PFN_vkCmdPushConstants cmd_push_constants;
  PFN_vkCreateComputePipelines create_compute_pipelines;
  PFN_vkQueueSubmit queue_submit;
  PFN_vkGetDeviceProcAddr get_device_proc_addr;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr;
  PFN_vkCreateDevice create_device;

  static VolkSnapshot take() {
    return {vkCmdDispatch,  vkCmdPipelineBarrier,  vkCmdBindPipeline,
            vkCmdPushConstants, vkCreateComputePipelines, vkQueueSubmit,
            vkGetDeviceProcAddr, vkGetInstanceProcAddr, vkCreateDevice};
  }
};

void compare(const char* name, const void* before, const void* after) {
  if (before != after) {
    std::fprintf(stderr, "FAILED: volk global %s changed from %p to %p\n", name, before, after);
    ++g_failures;
  }
}

void compare(const VolkSnapshot& a, const VolkSnapshot& b) {
  compare("vkCmdDispatch", reinterpret_cast<const void*>(a.cmd_dispatch), reinterpret_cast<const void*>(b.cmd_dispatch));
  compare("vkCmdPipelineBarrier", reinterpret_cast<const void*>(a.cmd_pipeline_barrier),
          reinterpret_cast<const void*>(b.cmd_pipeline_barrier));
  compare("vkCmdBindPipeline", reinterpret_cast<const void*>(a.cmd_bind_pipeline),
          reinterpret_cast<const void*>(b.cmd_bind_pipeline));
  compare("vkCmdPushConstants", reinterpret_cast<const void*>(a.cmd_push_constants),
          reinterpret_cast<const void*>(b.cmd_push_constants));
  compare("vkCreateComputePipelines", reinterpret_cast<const void*>(a.create_compute_pipelines),
          reinterpret_cast<const void*>(b.create_compute_pipelines));
  compare("vkQueueSubmit", reinterpret_cast<const void*>(a.queue_submit), reinterpret_cast<const void*>(b.queue_submit));
  compare("vkGetDeviceProcAddr", reinterpret_cast<const void*>(a.get_device_proc_addr),
          reinterpret_cast<const void*>(b.get_device_proc_addr));
  compare("vkGetInstanceProcAddr", reinterpret_cast<const void*>(a.get_instance_proc_addr),
          reinterpret_cast<const void*>(b.get_instance_proc_addr));
  compare("vkCreateDevice", reinterpret_cast<const void*>(a.create_device), reinterpret_cast<const void*>(b.create_device));
}

struct OwnedBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  // non-null when host-visible
};

// Prefer `preferred` memory properties, fall back to `required`.
bool find_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type_bits, VkMemoryPropertyFlags preferred,
                      VkMemoryPropertyFlags required, uint32_t& index, VkMemoryPropertyFlags& flags) {
  for (VkMemoryPropertyFlags want : {preferred, required}) {
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
      if ((type_bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) {
        index = i;
        flags = props.memoryTypes[i].propertyFlags;
        return true;
      }
    }
  }
  return false;
}

VkResult create_buffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& mem_props, VkDeviceSize size,
                       VkBufferUsageFlags usage, bool host_visible, OwnedBuffer& out) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(device, &bci, nullptr, &out.buffer);
  if (r != VK_SUCCESS) return r;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, out.buffer, &req);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = 0;
  VkMemoryPropertyFlags flags = 0;
  bool found = host_visible ? find_memory_type(mem_props, req.memoryTypeBits, host, host, type, flags)
                            : find_memory_type(mem_props, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, type, flags);
  if (!found) return VK_ERROR_FEATURE_NOT_PRESENT;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  r = vkAllocateMemory(device, &mai, nullptr, &out.memory);
  if (r != VK_SUCCESS) return r;
  r = vkBindBufferMemory(device, out.buffer, out.memory, 0);
  if (r != VK_SUCCESS) return r;
  if (host_visible) r = vkMapMemory(device, out.memory, 0, VK_WHOLE_SIZE, 0, &out.mapped);
  return r;
}

void destroy_buffer(VkDevice device, OwnedBuffer& b) {
  if (b.mapped) vkUnmapMemory(device, b.memory);
  if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device, b.memory, nullptr);
  b = {};
}

int run() {
  CHECK_VK(volkInitialize());

  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) CHECK_VK(vkEnumerateInstanceVersion(&loader_version));
  if (loader_version < VK_API_VERSION_1_1) {
    std::fprintf(stderr, "FAILED: the Vulkan loader supports only 1.0; vkprim needs 1.1\n");
    return 1;
  }
  const uint32_t api_version = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkprim package consumer";
  app.apiVersion = api_version;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  CHECK_VK(vkCreateInstance(&ici, nullptr, &instance));
  volkLoadInstance(instance);

  uint32_t count = 0;
  CHECK_VK(vkEnumeratePhysicalDevices(instance, &count, nullptr));
  if (count == 0) {
    std::fprintf(stderr, "FAILED: no Vulkan physical device\n");
    return 1;
  }
  std::vector<VkPhysicalDevice> physical_devices(count);
  CHECK_VK(vkEnumeratePhysicalDevices(instance, &count, physical_devices.data()));
  VkPhysicalDevice physical_device = physical_devices[0];
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_device, &props);
  std::printf("device: %s\n", props.deviceName);

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, families.data());
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < family_count; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      family = i;
      break;
    }
  }
  if (family == UINT32_MAX) {
    std::fprintf(stderr, "FAILED: no compute queue family\n");
    return 1;
  }

  auto req = vkprim::device_requirements(physical_device, vkGetInstanceProcAddr, instance);
  if (!req.ok()) {
    std::fprintf(stderr, "FAILED: vkprim::device_requirements: %s: %s\n", vkprim::to_string(req.error().status),
                 req.error().message.c_str());
    return 1;
  }
  vkprim::DeviceRequirements& requirements = req.value();
  std::printf("device_requirements: %zu extension(s)\n", requirements.extensions.size());
  for (const char* e : requirements.extensions) std::printf("  %s\n", e);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = requirements.features();
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(requirements.extensions.size());
  dci.ppEnabledExtensionNames = requirements.extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  CHECK_VK(vkCreateDevice(physical_device, &dci, nullptr, &device));
  volkLoadDevice(device);
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);

  const VolkSnapshot before = VolkSnapshot::take();

  vkprim::ContextCreateInfo cci;
  cci.instance = instance;
  cci.physical_device = physical_device;
  cci.device = device;
  cci.queue_family_index = family;
  cci.get_instance_proc_addr = vkGetInstanceProcAddr;
  cci.api_version = api_version;
  cci.enabled_features = requirements.features();
  cci.enabled_device_extensions = requirements.extensions;
  auto context = vkprim::Context::create(cci);
  if (!context.ok()) {
    std::fprintf(stderr, "FAILED: vkprim::Context::create: %s: %s\n", vkprim::to_string(context.error().status),
                 context.error().message.c_str());
    return 1;
  }
  std::printf("context: %s, subgroup size %u\n", context.value()->capabilities().device_name.c_str(),
              context.value()->capabilities().subgroup_size);

#if defined(CONSUMER_U32_ONLY)
  // Built with VKPRIM_TYPES=u32: an f32 plan is refused, with a message that names the option.
  {
    vkprim::ReduceDesc f32_desc;
    f32_desc.type = vkprim::DataType::f32;
    f32_desc.max_count = 1000;
    auto refused = vkprim::Reduce::create(*context.value(), f32_desc);
    if (refused.ok() || refused.error().status != vkprim::Status::unsupported ||
        refused.error().message.find("VKPRIM_TYPES") == std::string::npos) {
      std::fprintf(stderr, "FAILED: an f32 reduce with VKPRIM_TYPES=u32 gave %s: %s\n",
                   refused.ok() ? "a plan" : vkprim::to_string(refused.error().status),
                   refused.ok() ? "" : refused.error().message.c_str());
      return 1;
    }
    std::printf("VKPRIM_TYPES=u32: an f32 reduce is refused: %s\n", refused.error().message.c_str());
  }
#endif

  constexpr uint64_t n = 100000;
  vkprim::ReduceDesc desc;
  desc.type = vkprim::DataType::u32;
  desc.op = vkprim::Op::add;
  desc.max_count = n;
  auto reduce = vkprim::Reduce::create(*context.value(), desc);
  if (!reduce.ok()) {
    std::fprintf(stderr, "FAILED: vkprim::Reduce::create: %s: %s\n", vkprim::to_string(reduce.error().status),
                 reduce.error().message.c_str());
    return 1;
  }
  const vkprim::ScratchRequirements scratch_req = reduce.value().scratch_requirements();
  std::printf("reduce: algorithm %s, scratch %llu bytes (alignment %llu)\n",
              vkprim::to_string(reduce.value().algorithm()), static_cast<unsigned long long>(scratch_req.size),
              static_cast<unsigned long long>(scratch_req.alignment));

  VkPhysicalDeviceMemoryProperties mem_props;
  vkGetPhysicalDeviceMemoryProperties(physical_device, &mem_props);
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  OwnedBuffer input, output, scratch;
  CHECK_VK(create_buffer(device, mem_props, n * sizeof(uint32_t), usage, true, input));
  CHECK_VK(create_buffer(device, mem_props, 16, usage, true, output));
  CHECK_VK(create_buffer(device, mem_props, std::max<VkDeviceSize>(scratch_req.size, 16), usage | scratch_req.usage,
                         false, scratch));

  // Upload: fresh pseudo-random values large enough that the u32 sum wraps.
  std::vector<uint32_t> values(n);
  uint32_t state = 0x12345678u;
  uint32_t expected = 0;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = state;
    expected += v;  // wraps modulo 2^32, as vkprim's integer add does
  }
  std::memcpy(input.mapped, values.data(), n * sizeof(uint32_t));
  const uint32_t poison = 0xDEADBEEFu;
  std::memcpy(output.mapped, &poison, sizeof poison);

  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  CHECK_VK(vkCreateCommandPool(device, &cpci, nullptr, &pool));
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  CHECK_VK(vkAllocateCommandBuffers(device, &cbai, &cmd));
  VkCommandBufferBeginInfo cbbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  cbbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  CHECK_VK(vkBeginCommandBuffer(cmd, &cbbi));

  // The contract: the caller makes input writes visible to compute-shader reads before record.
  VkMemoryBarrier in_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  in_barrier.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
  in_barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &in_barrier, 0,
                       nullptr, 0, nullptr);

  auto recorded = reduce.value().record(cmd, vkprim::BufferRange{input.buffer, 0, n * sizeof(uint32_t)},
                                        vkprim::BufferRange{output.buffer, 0, 16}, n,
                                        vkprim::BufferRange{scratch.buffer, 0, std::max<VkDeviceSize>(scratch_req.size, 16)});
  if (!recorded.ok()) {
    std::fprintf(stderr, "FAILED: vkprim::Reduce::record: %s: %s\n", vkprim::to_string(recorded.status()),
                 recorded.message().c_str());
    return 1;
  }

  // ...and places a barrier from the compute-shader writes to its own consumer (here the host).
  VkMemoryBarrier out_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  out_barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  out_barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &out_barrier, 0,
                       nullptr, 0, nullptr);
  CHECK_VK(vkEndCommandBuffer(cmd));

  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  CHECK_VK(vkCreateFence(device, &fci, nullptr, &fence));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  CHECK_VK(vkQueueSubmit(queue, 1, &si, fence));
  CHECK_VK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));

  uint32_t got = 0;
  std::memcpy(&got, output.mapped, sizeof got);
  if (got != expected) {
    std::fprintf(stderr, "FAILED: reduce u32 add of %llu values: GPU %u (0x%08x), CPU %u (0x%08x)%s\n",
                 static_cast<unsigned long long>(n), got, got, expected, expected,
                 got == poison ? " (output still poisoned: nothing written)" : "");
    ++g_failures;
  } else {
    std::printf("reduce u32 add of %llu values: %u (matches the CPU)\n", static_cast<unsigned long long>(n), got);
  }

  // Destroy the plan and context before the device, as an engine would at shutdown.
  vkDestroyFence(device, fence, nullptr);
  vkDestroyCommandPool(device, pool, nullptr);
  destroy_buffer(device, input);
  destroy_buffer(device, output);
  destroy_buffer(device, scratch);
  { vkprim::Reduce dropped = std::move(reduce.value()); }
  context.value().reset();

  compare(before, VolkSnapshot::take());

  vkDestroyDevice(device, nullptr);
  vkDestroyInstance(instance, nullptr);
  return g_failures == 0 ? 0 : 1;
}

// The installed (or subproject's) generated version header and the library linked agree.
int check_version() {
  const vkprim::Version v = vkprim::version();
  std::printf("vkprim %s (headers %s)\n", v.string, VKPRIM_VERSION_STRING);
  if (v.major != VKPRIM_VERSION_MAJOR || v.minor != VKPRIM_VERSION_MINOR || v.patch != VKPRIM_VERSION_PATCH ||
      std::strcmp(v.string, VKPRIM_VERSION_STRING) != 0) {
    std::fprintf(stderr, "FAILED: vkprim::version() %s differs from the headers' %s\n", v.string, VKPRIM_VERSION_STRING);
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  const int rc = check_version() != 0 ? 1 : run();
  std::printf("%s\n", rc == 0 ? "PASSED" : "FAILED");
  return rc;
}
