// A borrowed device: the test plays an engine that loads Vulkan with volk (compiled into this test),
// creates its own instance (validation + synchronization validation where installed) and VkDevice with
// what device_requirements() asks for, wraps it in a vkprim::Context, and records a reduce into its
// own command buffer. vkprim must leave volk's global function pointers alone.
#include <volk.h>  // before any vkprim header

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "vkprim/context.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"

using namespace vkprim;

namespace {

struct Engine {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  uint32_t api_version = VK_API_VERSION_1_1;
  VkPhysicalDeviceMemoryProperties memory{};
  bool debug_utils = false;
  std::mutex mutex;
  std::vector<std::string> messages;

  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
    auto* self = static_cast<Engine*>(user);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->messages.push_back(data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
  }

  std::string describe_messages() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string text;
    for (const auto& m : messages) text += "  - " + m + "\n";
    return text.empty() ? "  (none)\n" : text;
  }
  size_t message_count() {
    std::lock_guard<std::mutex> lock(mutex);
    return messages.size();
  }
  // Checked at the end of every case that creates a device, after its Context is destroyed: the layers
  // reported no warning or error.
  void require_no_messages() {
    INFO("validation messages:\n" << describe_messages());
    REQUIRE(message_count() == 0);
  }

  // An instance of the loader's version up to `max_version` (an engine may ask for less than the loader has).
  void create_instance(uint32_t max_version = VK_API_VERSION_1_3) {
    REQUIRE(volkInitialize() == VK_SUCCESS);
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
    REQUIRE(loader_version >= VK_API_VERSION_1_1);
    api_version = std::min<uint32_t>(loader_version, max_version);

    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    const bool validation = std::any_of(layers.begin(), layers.end(), [](const VkLayerProperties& l) {
      return std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    });
    vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> available(count);
    vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data());
    debug_utils = std::any_of(available.begin(), available.end(), [](const VkExtensionProperties& e) {
      return std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
    });
    if (!validation) WARN("VK_LAYER_KHRONOS_validation is not installed: the borrowed device runs unvalidated");

    std::vector<const char*> extensions, enabled_layers;
    if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (validation) {
      enabled_layers.push_back("VK_LAYER_KHRONOS_validation");
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkprim borrowed-device test";
    app.apiVersion = api_version;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    messenger_info.pfnUserCallback = &Engine::on_message;
    messenger_info.pUserData = this;
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    info.enabledExtensionCount = uint32_t(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    info.enabledLayerCount = uint32_t(enabled_layers.size());
    info.ppEnabledLayerNames = enabled_layers.data();
    if (validation && debug_utils) {
      features.pNext = &messenger_info;
      info.pNext = &features;
    }
    REQUIRE(vkCreateInstance(&info, nullptr, &instance) == VK_SUCCESS);
    volkLoadInstance(instance);
    if (debug_utils && vkCreateDebugUtilsMessengerEXT)
      REQUIRE(vkCreateDebugUtilsMessengerEXT(instance, &messenger_info, nullptr, &messenger) == VK_SUCCESS);

    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    REQUIRE(count > 0);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance, &count, devices.data());
    // The same choice Device makes: VKPRIM_DEVICE as an index, else discrete > integrated > virtual > cpu.
    auto rank = [](VkPhysicalDeviceType t) {
      switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
        default: return 4;
      }
    };
    int best = -1;
    VkPhysicalDeviceProperties best_props{};
    for (uint32_t i = 0; i < count; ++i) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devices[i], &p);
      if (p.apiVersion < VK_API_VERSION_1_1) continue;
      if (best < 0 || rank(p.deviceType) < rank(best_props.deviceType)) {
        best = int(i);
        best_props = p;
      }
    }
    if (const char* env = std::getenv("VKPRIM_DEVICE"); env && *env && std::isdigit((unsigned char)env[0])) {
      best = std::atoi(env);
      REQUIRE(best < int(count));
    }
    REQUIRE(best >= 0);
    physical_device = devices[best];
    vkGetPhysicalDeviceMemoryProperties(physical_device, &memory);

    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &count, families.data());
    bool found = false;
    for (uint32_t i = 0; i < count && !found; ++i)
      if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        family = i;
        found = true;
      }
    REQUIRE(found);
  }

  // features == nullptr: only core Vulkan 1.0 features and no extensions.
  void create_device(const VkPhysicalDeviceFeatures2* features, const std::vector<const char*>& extensions) {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = features;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.enabledExtensionCount = uint32_t(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    REQUIRE(vkCreateDevice(physical_device, &info, nullptr, &device) == VK_SUCCESS);
    volkLoadDevice(device);
    vkGetDeviceQueue(device, family, 0, &queue);
  }

  ~Engine() {
    if (device) {
      vkDeviceWaitIdle(device);
      vkDestroyDevice(device, nullptr);
    }
    if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }
};

// A host-visible storage buffer the engine owns.
struct EngineBuffer {
  Engine* engine = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;

  EngineBuffer(Engine& e, VkDeviceSize bytes, VkBufferUsageFlags usage) : engine(&e), size(bytes) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = usage | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    REQUIRE(vkCreateBuffer(e.device, &info, nullptr, &buffer) == VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(e.device, buffer, &req);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = -1;
    for (uint32_t i = 0; i < e.memory.memoryTypeCount && type < 0; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (e.memory.memoryTypes[i].propertyFlags & want) == want) type = int(i);
    REQUIRE(type >= 0);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = uint32_t(type);
    REQUIRE(vkAllocateMemory(e.device, &alloc, nullptr, &memory) == VK_SUCCESS);
    REQUIRE(vkBindBufferMemory(e.device, buffer, memory, 0) == VK_SUCCESS);
    REQUIRE(vkMapMemory(e.device, memory, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS);
  }
  ~EngineBuffer() {
    if (mapped) vkUnmapMemory(engine->device, memory);
    if (buffer) vkDestroyBuffer(engine->device, buffer, nullptr);
    if (memory) vkFreeMemory(engine->device, memory, nullptr);
  }
  EngineBuffer(const EngineBuffer&) = delete;
  EngineBuffer& operator=(const EngineBuffer&) = delete;
  BufferRange range(VkDeviceSize offset, VkDeviceSize bytes) const { return BufferRange{buffer, offset, bytes}; }
};

// Records `body` into the engine's own command buffer, submits it and waits. Host writes before the
// submission are visible to the device; the trailing barrier makes compute writes visible to the host.
void run_on_engine(Engine& e, const std::function<void(VkCommandBuffer)>& body) {
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = e.family;
  VkCommandPool pool = VK_NULL_HANDLE;
  REQUIRE(vkCreateCommandPool(e.device, &pool_info, nullptr, &pool) == VK_SUCCESS);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  REQUIRE(vkAllocateCommandBuffers(e.device, &alloc, &cmd) == VK_SUCCESS);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd, &begin);
  body(cmd);
  VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, nullptr,
                       0, nullptr);
  REQUIRE(vkEndCommandBuffer(cmd) == VK_SUCCESS);
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  REQUIRE(vkCreateFence(e.device, &fence_info, nullptr, &fence) == VK_SUCCESS);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  CHECK(vkQueueSubmit(e.queue, 1, &submit, fence) == VK_SUCCESS);
  CHECK(vkWaitForFences(e.device, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS);
  vkDestroyFence(e.device, fence, nullptr);
  vkDestroyCommandPool(e.device, pool, nullptr);
}

// Reduces fresh random data of type T in the engine's buffers and checks it against the host.
template <class T>
void check_engine_reduce(Engine& e, Context& context, DataType type, Op op, ReduceAlgorithm algorithm, uint64_t n,
                         std::mt19937_64& rng) {
  INFO(to_string(type) << " " << to_string(op) << " " << to_string(algorithm) << " n=" << n);
  auto plan = Reduce::create(context, ReduceDesc{type, op, n, algorithm});
  INFO((plan ? std::string("created") : plan.error().message));
  REQUIRE(plan.ok());
  const ScratchRequirements need = plan->scratch_requirements();
  EngineBuffer input(e, n * sizeof(T), 0);
  EngineBuffer output(e, 64, 0);
  EngineBuffer scratch(e, std::max<VkDeviceSize>(need.size, 16), need.usage);
  const auto data = test::random_values<T>(n, rng);
  std::memcpy(input.mapped, data.data(), n * sizeof(T));
  std::vector<uint32_t> poison(16, test::kPoison);
  std::memcpy(output.mapped, poison.data(), 64);
  Result<void> recorded;
  run_on_engine(e, [&](VkCommandBuffer cmd) {
    recorded = plan->record(cmd, input.range(0, n * sizeof(T)), output.range(0, sizeof(T)), n,
                            scratch.range(0, scratch.size));
  });
  INFO(recorded.message());
  REQUIRE(recorded.ok());
  T got;
  std::memcpy(&got, output.mapped, sizeof(T));
  CHECK(test::matches_reference(data, op, got, plan->sequential_run(n)));
  CHECK(std::memcmp(static_cast<const char*>(output.mapped) + 16, poison.data(), 48) == 0);
}

// What vkprim asks the engine to enable on its physical device.
DeviceRequirements requirements_of(const Engine& engine) {
  auto requirements = device_requirements(engine.physical_device, vkGetInstanceProcAddr, engine.instance, engine.api_version);
  INFO((requirements ? std::string("requirements ok") : requirements.error().message));
  REQUIRE(requirements.ok());
  return std::move(requirements).value();
}

// The engine's handles alone: no enabled features or extensions declared.
ContextCreateInfo engine_handles(const Engine& engine) {
  ContextCreateInfo info;
  info.instance = engine.instance;
  info.physical_device = engine.physical_device;
  info.device = engine.device;
  info.queue_family_index = engine.family;
  info.get_instance_proc_addr = vkGetInstanceProcAddr;
  info.api_version = engine.api_version;
  return info;
}

// What the engine hands vkprim: its own handles and exactly what it enabled from `req`.
ContextCreateInfo borrowed_context_info(const Engine& engine, DeviceRequirements& req) {
  ContextCreateInfo info = engine_handles(engine);
  info.enabled_features = req.features();
  info.enabled_device_extensions = req.extensions;
  info.debug_utils_enabled = engine.debug_utils;
  return info;
}

// How many structs of `type` the pNext chain that starts at `head` holds.
int count_structs(const void* head, VkStructureType type) {
  int n = 0;
  for (auto* p = static_cast<const VkBaseInStructure*>(head); p; p = p->pNext) n += p->sType == type;
  return n;
}

// Merges `req` in one call into an engine's chain: VkPhysicalDeviceFeatures2, then `engine_structs`.
// Returns the chain's head (a copy; the structs it links are the engine's and req's).
VkPhysicalDeviceFeatures2 merged_chain(DeviceRequirements& req, void* engine_structs) {
  VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  chain.pNext = engine_structs;
  std::vector<const char*> extensions;
  auto merged = req.merge_into(chain, extensions);
  INFO(merged.message());
  CHECK(merged.ok());
  return chain;
}

// A few of volk's global function pointers, which vkprim must never overwrite.
struct VolkSnapshot {
  PFN_vkCmdDispatch dispatch = vkCmdDispatch;
  PFN_vkCmdBindPipeline bind = vkCmdBindPipeline;
  PFN_vkCmdPipelineBarrier barrier = vkCmdPipelineBarrier;
  PFN_vkCmdPushConstants push = vkCmdPushConstants;
  PFN_vkCreateComputePipelines pipelines = vkCreateComputePipelines;
  PFN_vkQueueSubmit submit = vkQueueSubmit;
  PFN_vkGetDeviceProcAddr gdpa = vkGetDeviceProcAddr;
  PFN_vkGetInstanceProcAddr gipa = vkGetInstanceProcAddr;
  bool operator==(const VolkSnapshot& o) const {
    return dispatch == o.dispatch && bind == o.bind && barrier == o.barrier && push == o.push &&
           pipelines == o.pipelines && submit == o.submit && gdpa == o.gdpa && gipa == o.gipa;
  }
};

}  // namespace

TEST_CASE("a borrowed VkDevice created with device_requirements() runs reduces recorded into the engine's "
          "own command buffers",
          "[borrowed]") {
  Engine engine;
  engine.create_instance();
  DeviceRequirements req = requirements_of(engine);
  engine.create_device(req.features(), req.extensions);
  const VolkSnapshot before;

  auto context = Context::create(borrowed_context_info(engine, req));
  INFO((context ? std::string("context ok") : context.error().message));
  REQUIRE(context.ok());
  const Capabilities& caps = context.value()->capabilities();
  VkPhysicalDeviceFeatures supported{};
  vkGetPhysicalDeviceFeatures(engine.physical_device, &supported);
  // What the engine enabled is what the context reports.
  CHECK(caps.has(feature_int64) == (supported.shaderInt64 == VK_TRUE));
  CHECK(caps.has(feature_float64) == (supported.shaderFloat64 == VK_TRUE));
  const bool has_push = std::any_of(req.extensions.begin(), req.extensions.end(), [](const char* e) {
    return std::strcmp(e, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0;
  });
  CHECK(caps.has(feature_push_descriptors) == has_push);
  // 8- and 16-bit storage (u8 and u16 sort keys): asked for on 1.2+ devices that have them; lavapipe has both.
  if (caps.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) {
    CHECK(req.vulkan12.storageBuffer8BitAccess == VK_TRUE);
    CHECK(req.vulkan11.storageBuffer16BitAccess == VK_TRUE);
  }
  CHECK(caps.has(feature_storage_8bit) == (req.vulkan12.storageBuffer8BitAccess == VK_TRUE));
  CHECK(caps.has(feature_storage_16bit) == (req.vulkan11.storageBuffer16BitAccess == VK_TRUE));

  VKPRIM_TEST_RNG(rng);
  Context& ctx = *context.value();
  check_engine_reduce<uint32_t>(engine, ctx, DataType::u32, Op::add, ReduceAlgorithm::automatic, 100003, rng);
  check_engine_reduce<int32_t>(engine, ctx, DataType::i32, Op::min, ReduceAlgorithm::unrolled_complete, 70001, rng);
  check_engine_reduce<float>(engine, ctx, DataType::f32, Op::add, ReduceAlgorithm::sequential, 4097, rng);
  if (caps.has(feature_int64))
    check_engine_reduce<uint64_t>(engine, ctx, DataType::u64, Op::add, ReduceAlgorithm::grid_stride, 100003, rng);
  if (caps.has(feature_float64))
    check_engine_reduce<double>(engine, ctx, DataType::f64, Op::max, ReduceAlgorithm::first_add_during_load, 9999, rng);

  CHECK(VolkSnapshot{} == before);
  context.value().reset();  // destroys vkprim's pipelines before the engine destroys its device
  CHECK(VolkSnapshot{} == before);
  engine.require_no_messages();
}

TEST_CASE("an engine with a Vulkan 1.1 instance creates its device from device_requirements without a validation "
          "message, gets 8-bit storage, size control and synchronization2 through extensions, and resolves Select "
          "to its portable path",
          "[borrowed]") {
  // device_requirements once chained the Vulkan 1.2 / 1.3 feature structs whenever the device had them,
  // which a device on a 1.1 instance may not take (VUID-VkDeviceCreateInfo-pNext-pNext, three times).
  Engine engine;
  engine.create_instance(VK_API_VERSION_1_1);
  REQUIRE(engine.api_version == VK_API_VERSION_1_1);
  DeviceRequirements req = requirements_of(engine);
  CHECK(req.api_version == VK_API_VERSION_1_1);
  CHECK(count_structs(req.features(), VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES) == 0);
  CHECK(count_structs(req.features(), VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 0);
  CHECK(count_structs(req.features(), VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) == 0);
  // What 1.2 / 1.3 made core comes through its extension and per-extension struct where the device has it
  // (lavapipe has all four): each asked-for feature has its struct in the chain and its extension listed.
  auto listed = [&](const char* name) {
    return std::any_of(req.extensions.begin(), req.extensions.end(),
                       [&](const char* e) { return std::strcmp(e, name) == 0; });
  };
  const VkPhysicalDeviceFeatures2* head = req.features();
  CHECK(count_structs(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES) ==
        (req.vulkan11.storageBuffer16BitAccess ? 1 : 0));
  CHECK(count_structs(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES) ==
        (req.vulkan12.storageBuffer8BitAccess ? 1 : 0));
  CHECK(listed(VK_KHR_8BIT_STORAGE_EXTENSION_NAME) == (req.vulkan12.storageBuffer8BitAccess == VK_TRUE));
  CHECK(count_structs(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES) ==
        (req.vulkan13.subgroupSizeControl ? 1 : 0));
  CHECK(listed(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME) == (req.vulkan13.subgroupSizeControl == VK_TRUE));
  CHECK(count_structs(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES) ==
        (req.vulkan13.synchronization2 ? 1 : 0));
  CHECK(listed(VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME) == (req.vulkan13.synchronization2 == VK_TRUE));
  CHECK(req.vulkan12.vulkanMemoryModel == VK_FALSE);  // its kernels are SPIR-V 1.5 (Vulkan 1.2)
  engine.create_device(req.features(), req.extensions);
  auto context = Context::create(borrowed_context_info(engine, req));
  INFO((context ? std::string("context ok") : context.error().message));
  REQUIRE(context.ok());
  Context& ctx = *context.value();
  const Capabilities& caps = ctx.capabilities();
  CHECK_FALSE(caps.has(feature_memory_model));
  if (caps.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) {
    CHECK(caps.has(feature_storage_16bit));
    CHECK(caps.has(feature_storage_8bit));
    CHECK(caps.has(feature_subgroup_size_control));
    CHECK(caps.has(feature_synchronization2));
  }
  CHECK(caps.has(feature_storage_8bit) == (req.vulkan12.storageBuffer8BitAccess == VK_TRUE));
  CHECK(caps.has(feature_subgroup_size_control) == (req.vulkan13.subgroupSizeControl == VK_TRUE));
  CHECK(caps.has(feature_synchronization2) == (req.vulkan13.synchronization2 == VK_TRUE));
  VKPRIM_TEST_RNG(rng);
  check_engine_reduce<uint32_t>(engine, ctx, DataType::u32, Op::add, ReduceAlgorithm::automatic, 100003, rng);
  {
    auto select = Select::create(ctx, SelectDesc{DataType::u32, 1000, SelectPredicate::less});
    INFO((select ? std::string("select ok") : select.error().message));
    REQUIRE(select.ok());
    CHECK(select->algorithm() == SelectAlgorithm::count_scan_scatter);
  }  // plans go before their context
  context.value().reset();
  engine.require_no_messages();
}

// Every plan's record and record_indirect on the engine's own buffers, scratch created with exactly the
// usage the plan reports: a missing flag (vkCmdFillBuffer needs TRANSFER_DST, vkCmdDispatchIndirect needs
// INDIRECT_BUFFER) is a validation error here, while Device::create_buffer, which the other tests use,
// would hide it.
TEST_CASE("scratch created with exactly the reported usage flags serves record and record_indirect of every "
          "plan on a borrowed device",
          "[borrowed][indirect]") {
  Engine engine;
  engine.create_instance();
  DeviceRequirements req = requirements_of(engine);
  engine.create_device(req.features(), req.extensions);
  auto context = Context::create(borrowed_context_info(engine, req));
  REQUIRE(context.ok());
  Context& ctx = *context.value();

  VKPRIM_TEST_RNG(rng);
  constexpr uint32_t n = 20011;
  auto keys = test::random_values<uint32_t>(n, rng);
  std::vector<uint32_t> flags(n), index(n);
  for (uint32_t i = 0; i < n; ++i) {
    flags[i] = keys[i] & 1u;
    index[i] = i;
  }
  EngineBuffer input(engine, n * 4, 0), flag_buffer(engine, n * 4, 0), output(engine, n * 4, 0);
  EngineBuffer values(engine, n * 4, 0), count(engine, 16, 0), selected(engine, 16, 0);
  std::memcpy(flag_buffer.mapped, flags.data(), n * 4);
  const uint32_t gpu_count = n - 7;
  std::memcpy(count.mapped, &gpu_count, 4);
  auto scratch_for = [&](const ScratchRequirements& need) {
    return std::make_unique<EngineBuffer>(engine, std::max<VkDeviceSize>(need.size, 16), need.usage);
  };
  auto restore = [&] {
    std::memcpy(input.mapped, keys.data(), n * 4);
    std::memcpy(values.mapped, index.data(), n * 4);
  };
  const BufferRange in = input.range(0, n * 4), out = output.range(0, n * 4), cnt = count.range(0, 4);
  // Each plan once with a CPU count and once with the GPU count (n - 7); results are checked by the
  // plans' own tests, this case is about the buffers' usage and so about validation.
  for (bool indirect : {false, true}) {
    INFO((indirect ? "record_indirect" : "record"));
    auto reduce = Reduce::create(ctx, ReduceDesc{DataType::u32, Op::add, n});
    auto scan = Scan::create(ctx, ScanDesc{DataType::u32, Op::add, ScanKind::exclusive, n});
    auto sort = RadixSort::create(ctx, SortDesc{DataType::u32, 4, SortOrder::ascending, n});
    auto select = Select::create(ctx, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
    auto partition = Partition::create(ctx, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
    REQUIRE((reduce.ok() && scan.ok() && sort.ok() && select.ok() && partition.ok()));
    auto s_reduce = scratch_for(reduce->scratch_requirements()), s_scan = scratch_for(scan->scratch_requirements());
    auto s_sort = scratch_for(sort->scratch_requirements()), s_select = scratch_for(select->scratch_requirements());
    auto s_partition = scratch_for(partition->scratch_requirements());
    auto whole = [](const std::unique_ptr<EngineBuffer>& b) { return b->range(0, b->size); };
    restore();
    std::vector<Result<void>> results;
    run_on_engine(engine, [&](VkCommandBuffer cmd) {
      // Reduce, Scan and RadixSort: record(..., n, scratch) or record_indirect(..., count buffer, scratch): the
      // count comes right before scratch in their signatures.
      auto record = [&](const auto& plan, const BufferRange& scratch_range, auto... before_count) {
        if (!results.empty()) test::between_records(vkCmdPipelineBarrier, cmd);  // they share data buffers
        results.push_back(indirect ? plan.record_indirect(cmd, before_count..., cnt, scratch_range)
                                   : plan.record(cmd, before_count..., uint64_t(n), scratch_range));
      };
      // Select and Partition take their buffers as one SelectOperands: record(operands, n) or
      // record_indirect(operands, count buffer).
      auto record_compaction = [&](const auto& plan, const SelectOperands& operands) {
        if (!results.empty()) test::between_records(vkCmdPipelineBarrier, cmd);
        results.push_back(indirect ? plan.record_indirect(cmd, operands, cnt)
                                   : plan.record(cmd, operands, uint64_t(n)));
      };
      const SelectOperands select_operands{.input = in,
                                           .flags = flag_buffer.range(0, n * 4),
                                           .output = out,
                                           .selected_count = selected.range(0, 4),
                                           .scratch = whole(s_select)};
      SelectOperands partition_operands = select_operands;
      partition_operands.scratch = whole(s_partition);
      record(*reduce, whole(s_reduce), in, output.range(0, 4));
      record(*scan, whole(s_scan), in, out);
      record_compaction(*select, select_operands);
      record_compaction(*partition, partition_operands);
      record(*sort, whole(s_sort), in, values.range(0, n * 4));
    });
    for (const auto& r : results) {
      INFO(r.message());
      CHECK(r.ok());
    }
    // The sort ran last, in place: its first (n or n - 7) keys are the sorted prefix of the input.
    const uint32_t sorted = indirect ? gpu_count : n;
    std::vector<uint32_t> expect(keys.begin(), keys.begin() + sorted);
    std::stable_sort(expect.begin(), expect.end());
    CHECK(std::memcmp(input.mapped, expect.data(), sorted * 4) == 0);
  }
  context.value().reset();
  engine.require_no_messages();
}

// An engine with its own feature chain and extension list merges vkprim's requirements into them: its own
// features stay enabled, vkprim's are added, the device is created from the engine's chain and a sort
// (memory model, subgroup size control, 64-bit where supported) runs on it.
TEST_CASE("DeviceRequirements::merge_into adds vkprim's features to an engine's own chain without clearing the "
          "engine's",
          "[borrowed][requirements]") {
  Engine engine;
  engine.create_instance();
  DeviceRequirements req = requirements_of(engine);

  // The engine's chain: Features2 -> its own Vulkan 1.2 struct (timeline semaphores, required in 1.2).
  VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  chain.features.robustBufferAccess = VK_TRUE;
  VkPhysicalDeviceVulkan12Features engine12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  engine12.timelineSemaphore = VK_TRUE;
  const bool v12 = req.api_version >= VK_API_VERSION_1_2;
  if (v12) chain.pNext = &engine12;
  std::vector<const char*> extensions;
  REQUIRE(req.merge_into(chain, extensions).ok());
  CHECK(chain.features.robustBufferAccess == VK_TRUE);
  CHECK(chain.features.shaderInt64 == req.features2.features.shaderInt64);
  if (v12) {
    CHECK(engine12.timelineSemaphore == VK_TRUE);
    CHECK(engine12.vulkanMemoryModel == req.vulkan12.vulkanMemoryModel);
    CHECK(engine12.shaderBufferInt64Atomics == req.vulkan12.shaderBufferInt64Atomics);
    CHECK(engine12.storageBuffer8BitAccess == req.vulkan12.storageBuffer8BitAccess);
  }
  // One struct of each type in the chain: vkprim's 1.1 struct (16-bit storage) and 1.3 struct appended, no
  // second 1.2 struct.
  CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES) ==
        (req.vulkan11.storageBuffer16BitAccess ? 1 : 0));
  CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == (v12 ? 1 : 0));
  CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) <= 1);
  // The pipeline-robustness struct appended exactly where the device has VK_EXT_pipeline_robustness.
  CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT) ==
        (req.pipeline_robustness.pipelineRobustness ? 1 : 0));
  CHECK(extensions.size() == req.extensions.size());
  // A second merge adds nothing: same extensions, same structs.
  REQUIRE(req.merge_into(chain, extensions).ok());
  CHECK(extensions.size() == req.extensions.size());

  engine.create_device(&chain, extensions);
  ContextCreateInfo info = borrowed_context_info(engine, req);
  info.enabled_features = &chain;
  info.enabled_device_extensions = extensions;
  auto context = Context::create(info);
  REQUIRE(context.ok());
  const Capabilities& caps = context.value()->capabilities();
  CHECK(caps.has(feature_memory_model) == (v12 && req.vulkan12.vulkanMemoryModel && req.vulkan12.vulkanMemoryModelDeviceScope));
  CHECK(caps.has(feature_pipeline_robustness) == (req.pipeline_robustness.pipelineRobustness == VK_TRUE));
  CHECK(caps.has(feature_storage_8bit) == (v12 && req.vulkan12.storageBuffer8BitAccess));
  CHECK(caps.has(feature_storage_16bit) == (req.vulkan11.storageBuffer16BitAccess == VK_TRUE));

  VKPRIM_TEST_RNG(rng);
  constexpr uint32_t n = 30001;
  {  // the plan goes before its context
    auto sort = RadixSort::create(*context.value(), SortDesc{DataType::u32, 0, SortOrder::ascending, n});
    REQUIRE(sort.ok());
    auto keys = test::random_values<uint32_t>(n, rng);
    EngineBuffer buffer(engine, n * 4, 0);
    const ScratchRequirements need = sort->scratch_requirements();
    EngineBuffer scratch(engine, need.size, need.usage);
    std::memcpy(buffer.mapped, keys.data(), n * 4);
    Result<void> recorded;
    run_on_engine(engine, [&](VkCommandBuffer cmd) {
      recorded = sort->record(cmd, buffer.range(0, n * 4), BufferRange{}, n, scratch.range(0, scratch.size));
    });
    INFO(recorded.message());
    REQUIRE(recorded.ok());
    std::stable_sort(keys.begin(), keys.end());
    CHECK(std::memcmp(buffer.mapped, keys.data(), n * 4) == 0);
  }

  // A chain of per-extension structs that lacks one vkprim needs gets vkprim's own beside them, in the
  // same call (before, merge_into refused it, naming the missing struct).
  if (v12 && req.vulkan12.vulkanMemoryModel && req.vulkan12.shaderBufferInt64Atomics) {
    VkPhysicalDeviceVulkanMemoryModelFeatures mm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    const VkPhysicalDeviceFeatures2 split = merged_chain(req, &mm);
    CHECK(mm.vulkanMemoryModel == VK_TRUE);
    CHECK(count_structs(&split, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES) == 1);
    CHECK(count_structs(&split, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 0);
  }
  context.value().reset();
  engine.require_no_messages();
}

// Host-only: the chain logic for VK_EXT_pipeline_robustness, which lavapipe lacks (so the device tests above
// run it only on GPUs), with the feature requested by hand.
TEST_CASE("DeviceRequirements puts the pipeline-robustness struct at the end of features() and merge_into appends "
          "it once or ORs it into the engine's own struct",
          "[borrowed][requirements]") {
  auto count_robustness = [](const void* head) {
    return count_structs(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT);
  };
  for (uint32_t version : {VK_API_VERSION_1_1, VK_API_VERSION_1_2, VK_API_VERSION_1_3}) {
    INFO("api version 1." << VK_API_VERSION_MINOR(version));
    DeviceRequirements req;
    req.api_version = version;
    CHECK(count_robustness(req.features()) == 0);  // not requested: not linked
    req.pipeline_robustness.pipelineRobustness = VK_TRUE;
    const VkPhysicalDeviceFeatures2* head = req.features();
    CHECK(count_robustness(head) == 1);
    const VkBaseInStructure* last = reinterpret_cast<const VkBaseInStructure*>(head);
    while (last->pNext) last = last->pNext;
    CHECK(last->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT);

    // An engine chain without the struct gets vkprim's appended once, also on a second merge.
    VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    std::vector<const char*> extensions;
    REQUIRE(req.merge_into(chain, extensions).ok());
    REQUIRE(req.merge_into(chain, extensions).ok());
    CHECK(count_robustness(&chain) == 1);
    // An engine chain with its own struct (feature off) gets it switched on, nothing appended.
    VkPhysicalDevicePipelineRobustnessFeaturesEXT own{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 engine_chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    engine_chain.pNext = &own;
    REQUIRE(req.merge_into(engine_chain, extensions).ok());
    CHECK(own.pipelineRobustness == VK_TRUE);
    CHECK(count_robustness(&engine_chain) == 1);
  }
}

// Host-only: merge_into with 8- and 16-bit storage requested by hand, against engine chains of core structs,
// of per-extension structs, and of per-extension structs that lack the storage ones.
TEST_CASE("DeviceRequirements::merge_into ORs 8- and 16-bit storage into the engine's core or per-extension "
          "structs, appends the core ones once, and completes per-extension chains with its own storage structs",
          "[borrowed][requirements]") {
  DeviceRequirements req;
  req.api_version = VK_API_VERSION_1_2;
  req.vulkan11.storageBuffer16BitAccess = VK_TRUE;
  req.vulkan12.storageBuffer8BitAccess = VK_TRUE;
  SECTION("an empty chain gets the 1.1 and 1.2 structs, once") {
    VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    std::vector<const char*> extensions;
    REQUIRE(req.merge_into(chain, extensions).ok());
    REQUIRE(req.merge_into(chain, extensions).ok());
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES) == 1);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 1);
    CHECK(req.vulkan11.storageBuffer16BitAccess == VK_TRUE);
    CHECK(req.vulkan12.storageBuffer8BitAccess == VK_TRUE);
  }
  SECTION("the engine's own core structs are switched on, nothing appended") {
    VkPhysicalDeviceVulkan12Features own12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features own11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    own11.shaderDrawParameters = VK_TRUE;
    own11.pNext = &own12;
    VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    chain.pNext = &own11;
    std::vector<const char*> extensions;
    REQUIRE(req.merge_into(chain, extensions).ok());
    CHECK(own11.storageBuffer16BitAccess == VK_TRUE);
    CHECK(own11.shaderDrawParameters == VK_TRUE);
    CHECK(own12.storageBuffer8BitAccess == VK_TRUE);
    CHECK(own12.pNext == nullptr);
  }
  SECTION("the engine's per-extension storage structs are switched on, no core struct appended") {
    VkPhysicalDevice8BitStorageFeatures own8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDevice16BitStorageFeatures own16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    own16.pNext = &own8;
    VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    chain.pNext = &own16;
    std::vector<const char*> extensions;
    REQUIRE(req.merge_into(chain, extensions).ok());
    CHECK(own16.storageBuffer16BitAccess == VK_TRUE);
    CHECK(own8.storageBuffer8BitAccess == VK_TRUE);
    CHECK(own8.pNext == nullptr);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES) == 0);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 0);
  }
  SECTION("a 1.1 per-extension chain without VkPhysicalDevice16BitStorageFeatures gets vkprim's, no 1.1 core struct") {
    VkPhysicalDeviceShaderDrawParametersFeatures draw{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_DRAW_PARAMETERS_FEATURES};
    const VkPhysicalDeviceFeatures2 chain = merged_chain(req, &draw);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES) == 1);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES) == 0);
    CHECK(req.extension_structs.storage16.storageBuffer16BitAccess == VK_TRUE);
  }
  SECTION("a 1.2 per-extension chain without VkPhysicalDevice8BitStorageFeatures gets vkprim's, no 1.2 core struct") {
    VkPhysicalDeviceShaderAtomicInt64Features atomics{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
    VkPhysicalDevice16BitStorageFeatures own16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    own16.pNext = &atomics;
    const VkPhysicalDeviceFeatures2 chain = merged_chain(req, &own16);
    CHECK(own16.storageBuffer16BitAccess == VK_TRUE);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES) == 1);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 0);
    CHECK(req.extension_structs.storage8.storageBuffer8BitAccess == VK_TRUE);
  }
}

// Host-only: per-extension structs that vkprim does not use still forbid the core struct of their version
// (VUID-VkDeviceCreateInfo-pNext-02830, -06532).
TEST_CASE("DeviceRequirements::merge_into appends no Vulkan 1.2 or 1.3 core struct beside any per-extension "
          "struct of that version, and completes such a chain with vkprim's per-extension structs in one call",
          "[borrowed][requirements]") {
  DeviceRequirements req;
  req.api_version = VK_API_VERSION_1_3;
  req.vulkan12.vulkanMemoryModel = VK_TRUE;
  req.vulkan12.vulkanMemoryModelDeviceScope = VK_TRUE;
  req.vulkan13.synchronization2 = VK_TRUE;
  SECTION("timeline semaphores without the memory-model struct: vkprim's memory-model struct beside them") {
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    timeline.timelineSemaphore = VK_TRUE;
    const VkPhysicalDeviceFeatures2 chain = merged_chain(req, &timeline);
    CHECK(timeline.timelineSemaphore == VK_TRUE);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES) == 1);
    CHECK(req.extension_structs.memory_model.vulkanMemoryModel == VK_TRUE);
    CHECK(req.extension_structs.memory_model.vulkanMemoryModelDeviceScope == VK_TRUE);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 0);
    // Vulkan 1.3 structs: the chain has none of that version, so the core struct carries synchronization2.
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) == 1);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES) == 0);
  }
  SECTION("dynamic rendering without the synchronization2 struct: vkprim's synchronization2 struct beside it") {
    VkPhysicalDeviceDynamicRenderingFeatures rendering{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES};
    const VkPhysicalDeviceFeatures2 chain = merged_chain(req, &rendering);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES) == 1);
    CHECK(req.extension_structs.synchronization2.synchronization2 == VK_TRUE);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) == 0);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 1);
  }
  SECTION("with vkprim's per-extension structs beside them, they are switched on and no core struct is added") {
    VkPhysicalDeviceSynchronization2Features sync2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
    VkPhysicalDeviceDynamicRenderingFeatures rendering{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES};
    rendering.pNext = &sync2;
    VkPhysicalDeviceVulkanMemoryModelFeatures memory_model{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    memory_model.pNext = &rendering;
    VkPhysicalDeviceBufferDeviceAddressFeatures address{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
    address.bufferDeviceAddress = VK_TRUE;
    address.pNext = &memory_model;
    VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    chain.pNext = &address;
    std::vector<const char*> extensions;
    auto merged = req.merge_into(chain, extensions);
    INFO(merged.message());
    REQUIRE(merged.ok());
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) == 0);
    CHECK(count_structs(&chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) == 0);
    CHECK(memory_model.vulkanMemoryModel == VK_TRUE);
    CHECK(memory_model.vulkanMemoryModelDeviceScope == VK_TRUE);
    CHECK(sync2.synchronization2 == VK_TRUE);
    CHECK(address.bufferDeviceAddress == VK_TRUE);
  }
}

TEST_CASE("a Context reads 8- and 16-bit storage from the per-extension structs of the engine's chain",
          "[borrowed]") {
  Engine engine;
  engine.create_instance();
  DeviceRequirements req = requirements_of(engine);
  if (!req.vulkan12.storageBuffer8BitAccess || !req.vulkan11.storageBuffer16BitAccess) {
    WARN("the device lacks storageBuffer8BitAccess or storageBuffer16BitAccess: nothing to check");
    return;
  }
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  storage8.storageBuffer8BitAccess = VK_TRUE;
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  storage16.storageBuffer16BitAccess = VK_TRUE;
  storage16.pNext = &storage8;
  VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  chain.pNext = &storage16;
  engine.create_device(&chain, {});
  ContextCreateInfo info = engine_handles(engine);
  info.enabled_features = &chain;
  auto context = Context::create(info);
  REQUIRE(context.ok());
  CHECK(context.value()->capabilities().has(feature_storage_8bit));
  CHECK(context.value()->capabilities().has(feature_storage_16bit));
  context.value().reset();
  engine.require_no_messages();
}

TEST_CASE("a Context given no enabled features reports no 64-bit support and refuses 64-bit reduces with "
          "unsupported",
          "[borrowed]") {
  Engine engine;
  engine.create_instance();
  engine.create_device(nullptr, {});  // core features only, no extensions

  ContextCreateInfo info = engine_handles(engine);  // enabled_features stays nullptr
  auto context = Context::create(info);
  INFO((context ? std::string("context ok") : context.error().message));
  REQUIRE(context.ok());
  Context& ctx = *context.value();
  const Capabilities& caps = ctx.capabilities();
  CHECK_FALSE(caps.has(feature_int64));
  CHECK_FALSE(caps.has(feature_float64));
  CHECK_FALSE(caps.has(feature_push_descriptors));
  CHECK_FALSE(caps.has(feature_subgroup_size_control));
  CHECK_FALSE(caps.has(feature_synchronization2));
  CHECK_FALSE(caps.has(feature_storage_8bit));
  CHECK_FALSE(caps.has(feature_storage_16bit));

  for (DataType type : {DataType::u64, DataType::i64, DataType::f64}) {
    auto plan = Reduce::create(ctx, ReduceDesc{type, Op::add, 1000});
    INFO(to_string(type));
    REQUIRE_FALSE(plan.ok());
    INFO(plan.error().message);
    CHECK(plan.status() == Status::unsupported);
    CHECK_FALSE(plan.error().message.empty());
    CHECK(plan.error().message.find(type == DataType::f64 ? "shaderFloat64" : "shaderInt64") != std::string::npos);
  }
  // 32-bit reduces work with core features only (descriptor sets, no size control, no sync2).
  VKPRIM_TEST_RNG(rng);
  for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a)
    check_engine_reduce<uint32_t>(engine, ctx, DataType::u32, Op::add, ReduceAlgorithm(a), 70001, rng);
  check_engine_reduce<float>(engine, ctx, DataType::f32, Op::max, ReduceAlgorithm::grid_stride, 4097, rng);
  context.value().reset();
  engine.require_no_messages();
}

TEST_CASE("Context::create rejects missing handles with invalid_argument", "[borrowed]") {
  ContextCreateInfo info;
  auto context = Context::create(info);
  REQUIRE_FALSE(context.ok());
  INFO(context.error().message);
  CHECK(context.status() == Status::invalid_argument);
  CHECK_FALSE(context.error().message.empty());
  auto requirements = device_requirements(VK_NULL_HANDLE, nullptr, VK_NULL_HANDLE, VK_API_VERSION_1_1);
  CHECK(requirements.status() == Status::invalid_argument);
}

TEST_CASE("an engine that enabled 64-bit atomics but not shaderInt64 gets chained scans without 64-bit state "
          "words",
          "[borrowed]") {
  Engine engine;
  engine.create_instance();
  DeviceRequirements req = requirements_of(engine);
  if (!req.vulkan12.shaderBufferInt64Atomics || !req.vulkan12.vulkanMemoryModel) {
    WARN("the device lacks shaderBufferInt64Atomics or vulkanMemoryModel: nothing to check");
    return;
  }
  // The 64-bit state word needs the Int64 capability as well as the atomics: enabling one without the
  // other is legal, and validation rejects a module that uses a capability whose feature is off.
  req.features2.features.shaderInt64 = VK_FALSE;
  engine.create_device(req.features(), req.extensions);
  auto context = Context::create(borrowed_context_info(engine, req));
  REQUIRE(context.ok());
  CHECK_FALSE(context.value()->capabilities().has(feature_int64));
  CHECK(context.value()->capabilities().has(feature_int64_atomics));
  for (ScanAlgorithm a : {ScanAlgorithm::chained_fallback, ScanAlgorithm::chained_lookback}) {
    auto scan = Scan::create(*context.value(), ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, 100000, a});
    INFO(to_string(a) << ": " << (scan ? std::string("ok") : scan.error().message));
    // Lavapipe refuses chained_lookback (no forward progress); the chained_fallback plan must build.
    if (a == ScanAlgorithm::chained_fallback) CHECK(scan.ok());
  }
  {
    auto select = Select::create(*context.value(), SelectDesc{DataType::u32, 100000});
    CHECK(select.ok());
  }  // plans go before their context
  context.value().reset();
  engine.require_no_messages();
}

namespace {

// The engine's barrier between two of vkprim's records: compute-shader writes to compute-shader reads
// and indirect-argument reads (the next plan reads the previous one's GPU count).
void compute_to_next(VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 0, 1, &b, 0, nullptr,
                       0, nullptr);
}

template <class Plan>
Plan created(Result<Plan> plan) {
  INFO((plan ? std::string("created") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

// An engine on an instance of `version`: its own feature chain completed by merge_into in one call, then
// Select (keys below a pivot) -> RadixSort of the kept keys in place -> inclusive Scan of them, each
// record_indirect reading the count the previous step wrote on the GPU, in one command buffer of the
// engine's, under validation with synchronization validation.
void select_sort_scan(uint32_t version) {
  Engine engine;
  engine.create_instance(version);
  INFO("instance 1." << VK_API_VERSION_MINOR(engine.api_version));
  DeviceRequirements req = requirements_of(engine);
  // The engine's own chain: Features2 with a core feature of its own, merged with vkprim's in one call.
  VkPhysicalDeviceFeatures2 chain{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceFeatures supported{};
  vkGetPhysicalDeviceFeatures(engine.physical_device, &supported);
  chain.features.robustBufferAccess = supported.robustBufferAccess;
  std::vector<const char*> extensions;
  auto merged = req.merge_into(chain, extensions);
  INFO(merged.message());
  REQUIRE(merged.ok());
  engine.create_device(&chain, extensions);
  ContextCreateInfo info = engine_handles(engine);
  info.enabled_features = &chain;
  info.enabled_device_extensions = extensions;
  info.debug_utils_enabled = engine.debug_utils;
  auto context = Context::create(info);
  INFO((context ? std::string("context ok") : context.error().message));
  REQUIRE(context.ok());
  Context& ctx = *context.value();
  VKPRIM_TEST_RNG(rng);
  {
    const uint64_t max_count = 50000, n = 43211;
    const uint32_t pivot = 0x60000000u;  // keeps about 3/8 of uniform u32 keys
    auto select = created(Select::create(ctx, SelectDesc{DataType::u32, max_count, SelectPredicate::less}));
    auto sort = created(RadixSort::create(ctx, SortDesc{DataType::u32, 0, SortOrder::ascending, max_count}));
    ScanDesc scan_desc;
    scan_desc.max_count = max_count;
    auto scan = created(Scan::create(ctx, scan_desc));
    INFO(to_string(select.algorithm()) << ", " << to_string(sort.algorithm()) << ", " << to_string(scan.algorithm()));
    if (engine.api_version < VK_API_VERSION_1_2) {
      CHECK(select.algorithm() == SelectAlgorithm::count_scan_scatter);
      CHECK(scan.algorithm() == ScanAlgorithm::reduce_then_scan);
    }

    EngineBuffer input(engine, max_count * 4, 0);
    EngineBuffer kept(engine, max_count * 4, 0);
    EngineBuffer scanned(engine, max_count * 4, 0);
    EngineBuffer counts(engine, 16, 0);  // [0]: the engine's count, [1]: Select's kept count
    auto scratch_for = [&](const ScratchRequirements& need) {
      return std::make_unique<EngineBuffer>(engine, std::max<VkDeviceSize>(need.size, 16), need.usage);
    };
    auto select_scratch = scratch_for(select.scratch_requirements());
    auto sort_scratch = scratch_for(sort.scratch_requirements());
    auto scan_scratch = scratch_for(scan.scratch_requirements());
    const auto data = test::random_values<uint32_t>(max_count, rng);
    std::memcpy(input.mapped, data.data(), max_count * 4);
    std::fill_n(static_cast<uint32_t*>(kept.mapped), max_count, test::kPoison);
    std::fill_n(static_cast<uint32_t*>(scanned.mapped), max_count, test::kPoison);
    const uint32_t count_words[4] = {uint32_t(n), test::kPoison, test::kPoison, test::kPoison};
    std::memcpy(counts.mapped, count_words, 16);

    Result<void> selected, sorted, summed;
    run_on_engine(engine, [&](VkCommandBuffer cmd) {
      selected = select.record_indirect(cmd,
                                        SelectOperands{input.range(0, max_count * 4), {}, kept.range(0, max_count * 4),
                                                       counts.range(4, 4), select_scratch->range(0, select_scratch->size)},
                                        counts.range(0, 4), Comparand::of(pivot));
      compute_to_next(cmd);
      sorted = sort.record_indirect(cmd, kept.range(0, max_count * 4), {}, counts.range(4, 4),
                                    sort_scratch->range(0, sort_scratch->size));
      compute_to_next(cmd);
      summed = scan.record_indirect(cmd, kept.range(0, max_count * 4), scanned.range(0, max_count * 4),
                                    counts.range(4, 4), scan_scratch->range(0, scan_scratch->size));
    });
    INFO(selected.message() << " / " << sorted.message() << " / " << summed.message());
    REQUIRE(selected.ok());
    REQUIRE(sorted.ok());
    REQUIRE(summed.ok());

    std::vector<uint32_t> expected;
    for (uint64_t i = 0; i < n; ++i)
      if (data[i] < pivot) expected.push_back(data[i]);
    std::sort(expected.begin(), expected.end());
    const uint32_t k = static_cast<const uint32_t*>(counts.mapped)[1];
    REQUIRE(k == expected.size());
    const auto* got_kept = static_cast<const uint32_t*>(kept.mapped);
    const auto* got_scanned = static_cast<const uint32_t*>(scanned.mapped);
    uint32_t sum = 0;
    uint64_t wrong_keys = 0, wrong_sums = 0;
    for (uint32_t i = 0; i < k; ++i) {
      sum += expected[i];
      wrong_keys += got_kept[i] != expected[i];
      wrong_sums += got_scanned[i] != sum;
    }
    CHECK(wrong_keys == 0);
    CHECK(wrong_sums == 0);
    // Nothing past the kept count was written.
    uint64_t touched = 0;
    for (uint64_t i = k; i < max_count; ++i) touched += (got_kept[i] != test::kPoison) + (got_scanned[i] != test::kPoison);
    CHECK(touched == 0);
  }  // plans go before their context
  context.value().reset();
  engine.require_no_messages();
}

}  // namespace

TEST_CASE("an engine on a Vulkan 1.1 instance chains select, sort and scan with GPU-driven counts in one command "
          "buffer, validation-clean",
          "[engine][indirect]") {
  select_sort_scan(VK_API_VERSION_1_1);
}

TEST_CASE("an engine on a Vulkan 1.3 instance chains select, sort and scan with GPU-driven counts in one command "
          "buffer, validation-clean",
          "[engine][indirect]") {
  select_sort_scan(VK_API_VERSION_1_3);
}
