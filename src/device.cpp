// Device: a standalone instance + device + compute queue for tools, tests and apps without an engine.
#include "vkprim/device.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "context_impl.hpp"
#include "errors.hpp"

namespace vkprim {

namespace {

using detail::make_error;
using detail::vk_error;

#define VKPRIM_STANDALONE_GLOBAL(X) \
  X(vkCreateInstance)               \
  X(vkEnumerateInstanceVersion)     \
  X(vkEnumerateInstanceLayerProperties) \
  X(vkEnumerateInstanceExtensionProperties)

#define VKPRIM_STANDALONE_INSTANCE(X)      \
  X(vkDestroyInstance)                     \
  X(vkEnumeratePhysicalDevices)            \
  X(vkGetPhysicalDeviceProperties)         \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)   \
  X(vkGetPhysicalDeviceFeatures2)          \
  X(vkEnumerateDeviceExtensionProperties)  \
  X(vkCreateDevice)                        \
  X(vkGetDeviceProcAddr)

#define VKPRIM_STANDALONE_DEVICE(X) \
  X(vkDestroyDevice)                \
  X(vkGetDeviceQueue)               \
  X(vkDeviceWaitIdle)               \
  X(vkCreateBuffer)                 \
  X(vkDestroyBuffer)                \
  X(vkGetBufferMemoryRequirements)  \
  X(vkAllocateMemory)               \
  X(vkFreeMemory)                   \
  X(vkBindBufferMemory)             \
  X(vkMapMemory)                    \
  X(vkUnmapMemory)                  \
  X(vkCreateCommandPool)            \
  X(vkDestroyCommandPool)           \
  X(vkAllocateCommandBuffers)       \
  X(vkFreeCommandBuffers)           \
  X(vkBeginCommandBuffer)           \
  X(vkEndCommandBuffer)             \
  X(vkCmdCopyBuffer)                \
  X(vkCmdFillBuffer)                \
  X(vkCmdPipelineBarrier)           \
  X(vkQueueSubmit)                  \
  X(vkCreateFence)                  \
  X(vkDestroyFence)                 \
  X(vkWaitForFences)                \
  X(vkCreatePipelineCache)          \
  X(vkDestroyPipelineCache)         \
  X(vkGetPipelineCacheData)

struct Loader {
  void* library = nullptr;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VKPRIM_STANDALONE_GLOBAL(VKPRIM_DECLARE_PFN)
};

// The system loader, opened once per process and never closed (other code may hold its functions).
Result<const Loader*> loader() {
  static Loader instance;
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    for (const char* name : {"libvulkan.so.1", "libvulkan.so"}) {
      instance.library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (instance.library) break;
    }
    if (!instance.library) {
      failure = "the Vulkan loader (libvulkan.so.1) could not be opened";
      return;
    }
    instance.gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(instance.library, "vkGetInstanceProcAddr"));
    if (!instance.gipa) {
      failure = "the Vulkan loader has no vkGetInstanceProcAddr";
      return;
    }
#define VKPRIM_LOAD_GLOBAL(name) instance.name = reinterpret_cast<PFN_##name>(instance.gipa(nullptr, #name));
    VKPRIM_STANDALONE_GLOBAL(VKPRIM_LOAD_GLOBAL)
    if (!instance.vkCreateInstance) failure = "the Vulkan loader has no vkCreateInstance";
  });
  if (!failure.empty()) return make_error(Status::unsupported, failure);
  return static_cast<const Loader*>(&instance);
}

// Device types in the order an unselected device is preferred; any other type comes last.
constexpr VkPhysicalDeviceType kTypePreference[] = {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                                                    VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                                                    VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_PHYSICAL_DEVICE_TYPE_CPU};

int type_rank(VkPhysicalDeviceType type) {
  return int(std::find(std::begin(kTypePreference), std::end(kTypePreference), type) - std::begin(kTypePreference));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return s;
}

std::string cache_path(const VkPhysicalDeviceProperties& props) {
  std::string dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) dir = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) dir = std::string(home) + "/.cache";
  else return {};
  char name[96];
  std::snprintf(name, sizeof(name), "/vkprim-pipelines-%04x-%04x.bin", props.vendorID, props.deviceID);
  return dir + name;
}

}  // namespace

struct Device::Impl {
  const Loader* loader = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = nullptr;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  std::string pipeline_cache_file;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  VKPRIM_STANDALONE_INSTANCE(VKPRIM_DECLARE_PFN)
  VKPRIM_STANDALONE_DEVICE(VKPRIM_DECLARE_PFN)
  std::unique_ptr<Context> context;
  DeviceRequirements requirements;
  // DeviceOptions::pipeline_statistics: appended to the requirements' feature chain, so it lives as long.
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};

  mutable std::mutex submit_mutex;  // queue, command pool and staging buffer
  VkCommandPool pool = VK_NULL_HANDLE;
  mutable VkCommandBuffer submit_cmd = VK_NULL_HANDLE;  // reused by every submit (freed with the pool)
  VkBuffer staging = VK_NULL_HANDLE;
  VkDeviceMemory staging_memory = VK_NULL_HANDLE;
  void* staging_map = nullptr;
  VkDeviceSize staging_size = 0;

  mutable std::mutex message_mutex;
  std::vector<std::string> messages;
  std::atomic<uint64_t> message_count{0};

  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* self = static_cast<Impl*>(user);
    if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
    std::string text = data && data->pMessage ? data->pMessage : "(no message)";
    std::fprintf(stderr, "vkprim validation: %s\n", text.c_str());
    std::lock_guard<std::mutex> lock(self->message_mutex);
    self->messages.push_back(std::move(text));
    self->message_count++;
    return VK_FALSE;
  }

  int32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want) const {
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want) return int32_t(i);
    return -1;
  }

  Result<void> make_buffer(VkDeviceSize bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags want, VkBuffer& buffer,
                           VkDeviceMemory& memory_out) const {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r = vkCreateBuffer(device, &info, nullptr, &buffer);
    if (r != VK_SUCCESS) return vk_error(r, "vkCreateBuffer(", bytes, " bytes)");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffer, &req);
    int32_t type = memory_type(req.memoryTypeBits, want);
    if (type < 0) {
      vkDestroyBuffer(device, buffer, nullptr);
      buffer = VK_NULL_HANDLE;
      return make_error(Status::unsupported, "no memory type with the needed properties for a buffer");
    }
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = uint32_t(type);
    // Large buffers get their own allocation: NVIDIA placed big buffers that reused freed memory
    // measurably slower (DESIGN.md, benchmark notes).
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.buffer = buffer;
    if (bytes >= (VkDeviceSize(16) << 20)) alloc.pNext = &dedicated;
    r = vkAllocateMemory(device, &alloc, nullptr, &memory_out);
    if (r != VK_SUCCESS) {
      vkDestroyBuffer(device, buffer, nullptr);
      buffer = VK_NULL_HANDLE;
      return vk_error(r, "vkAllocateMemory(", req.size, " bytes)");
    }
    r = vkBindBufferMemory(device, buffer, memory_out, 0);
    if (r != VK_SUCCESS) return vk_error(r, "vkBindBufferMemory");
    return {};
  }

  // One command buffer, allocated once and re-recorded (vkBeginCommandBuffer resets it: the pool allows
  // it) and never freed before the device goes: the Khronos validation layer shipped with Debian 12
  // (1.3.239) erases a freed command buffer's debug-label state without its lock and corrupted memory
  // here under load (a flaky SIGBUS in CI; upstream fix: Vulkan-ValidationLayers PR 5312).
  Result<void> submit_locked(const std::function<void(VkCommandBuffer)>& record) const {
    VkResult r = VK_SUCCESS;
    if (!submit_cmd) {
      VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      alloc.commandPool = pool;
      alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      alloc.commandBufferCount = 1;
      r = vkAllocateCommandBuffers(device, &alloc, &submit_cmd);
      if (r != VK_SUCCESS) return vk_error(r, "vkAllocateCommandBuffers");
    }
    VkCommandBuffer cmd = submit_cmd;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &begin);
    record(cmd);
    r = vkEndCommandBuffer(cmd);
    VkFence fence = VK_NULL_HANDLE;
    if (r == VK_SUCCESS) {
      VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      r = vkCreateFence(device, &fence_info, nullptr, &fence);
    }
    if (r == VK_SUCCESS) {
      VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &cmd;
      r = vkQueueSubmit(queue, 1, &submit, fence);
    }
    if (r == VK_SUCCESS) r = vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
    if (fence) vkDestroyFence(device, fence, nullptr);
    if (r != VK_SUCCESS) return vk_error(r, "submitting a command buffer");
    return {};
  }

  Result<void> ensure_staging(VkDeviceSize want) {
    if (staging_size >= want) return {};
    if (staging) {
      vkUnmapMemory(device, staging_memory);
      vkDestroyBuffer(device, staging, nullptr);
      vkFreeMemory(device, staging_memory, nullptr);
      staging = VK_NULL_HANDLE;
      staging_size = 0;
    }
    auto made = make_buffer(want, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, staging,
                            staging_memory);
    if (!made) return made;
    VkResult r = vkMapMemory(device, staging_memory, 0, want, 0, &staging_map);
    if (r != VK_SUCCESS) return vk_error(r, "vkMapMemory");
    staging_size = want;
    return {};
  }

  void save_pipeline_cache() {
    if (!pipeline_cache || pipeline_cache_file.empty()) return;
    size_t size = 0;
    if (vkGetPipelineCacheData(device, pipeline_cache, &size, nullptr) != VK_SUCCESS || size == 0) return;
    std::vector<char> data(size);
    if (vkGetPipelineCacheData(device, pipeline_cache, &size, data.data()) != VK_SUCCESS) return;
    const std::string tmp = pipeline_cache_file + ".tmp";
    std::ofstream out(tmp, std::ios::binary);
    if (!out.write(data.data(), std::streamsize(size))) return;
    out.close();
    std::rename(tmp.c_str(), pipeline_cache_file.c_str());
  }

  ~Impl() {
    context.reset();
    if (device) {
      vkDeviceWaitIdle(device);
      save_pipeline_cache();
      if (pipeline_cache) vkDestroyPipelineCache(device, pipeline_cache, nullptr);
      if (staging) {
        vkUnmapMemory(device, staging_memory);
        vkDestroyBuffer(device, staging, nullptr);
        vkFreeMemory(device, staging_memory, nullptr);
      }
      if (pool) vkDestroyCommandPool(device, pool, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (messenger && destroy_messenger) destroy_messenger(instance, messenger, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }
};

Result<std::vector<DeviceInfo>> Device::enumerate() {
  auto ld = loader();
  if (!ld) return std::move(ld).error();
  const Loader& l = *ld.value();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkprim";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = l.vkCreateInstance(&info, nullptr, &instance);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateInstance");
  auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(l.gipa(instance, "vkDestroyInstance"));
  auto enumerate_devices = reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(l.gipa(instance, "vkEnumeratePhysicalDevices"));
  auto properties = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(l.gipa(instance, "vkGetPhysicalDeviceProperties"));
  uint32_t count = 0;
  enumerate_devices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  enumerate_devices(instance, &count, devices.data());
  std::vector<DeviceInfo> out;
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties p;
    properties(devices[i], &p);
    out.push_back({i, p.deviceName, p.deviceType, p.apiVersion});
  }
  destroy(instance, nullptr);
  return out;
}

Device::Device(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Device::~Device() = default;

namespace {

// VK_KHR_pipeline_executable_properties with pipelineExecutableInfo on the chosen physical device.
bool supports_pipeline_statistics(const Device::Impl& d) {
  uint32_t count = 0;
  d.vkEnumerateDeviceExtensionProperties(d.physical_device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  d.vkEnumerateDeviceExtensionProperties(d.physical_device, nullptr, &count, extensions.data());
  if (std::none_of(extensions.begin(), extensions.end(), [](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
      }))
    return false;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &executable;
  d.vkGetPhysicalDeviceFeatures2(d.physical_device, &features);
  return executable.pipelineExecutableInfo == VK_TRUE;
}

// What the instance enables, chosen before it is created.
struct InstanceSetup {
  uint32_t api_version = VK_API_VERSION_1_0;
  bool debug_utils = false;  // VK_EXT_debug_utils: the Context's labels and the validation messenger
  std::vector<const char*> extensions;
  std::vector<const char*> layers;
};

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// The loader's version, at most 1.3; a 1.0 loader cannot run vkprim.
Result<uint32_t> instance_api_version(const Loader& l) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (l.vkEnumerateInstanceVersion) l.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1)
    return make_error(Status::unsupported, "the Vulkan loader supports only Vulkan 1.0; vkprim needs 1.1");
  return std::min(loader_version, VK_API_VERSION_1_3);
}

bool has_instance_layer(const Loader& l, const char* name) {
  uint32_t count = 0;
  l.vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  l.vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& p) { return std::strcmp(p.layerName, name) == 0; });
}

// Debug utils wherever the loader has it; validation needs the Khronos layer and debug utils both.
Result<InstanceSetup> resolve_instance(const Loader& l, bool validation) {
  auto version = instance_api_version(l);
  if (!version) return std::move(version).error();
  InstanceSetup s;
  s.api_version = version.value();
  uint32_t count = 0;
  l.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> available(count);
  l.vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data());
  s.debug_utils = std::any_of(available.begin(), available.end(), [](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
  });
  if (s.debug_utils) s.extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (validation) {
    if (!has_instance_layer(l, kValidationLayer))
      return make_error(Status::unsupported, "validation requested but ", kValidationLayer,
                        " is not installed (Debian: vulkan-validationlayers)");
    if (!s.debug_utils) return make_error(Status::unsupported, "validation requested but VK_EXT_debug_utils is missing");
    s.layers.push_back(kValidationLayer);
    s.extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  return s;
}

// The instance and its functions; with validation, synchronization validation and a messenger that counts
// every warning and error.
Result<void> create_instance(Device::Impl& d, const InstanceSetup& s, bool validation) {
  const Loader& l = *d.loader;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkprim";
  app.pEngineName = "vkprim";
  app.apiVersion = s.api_version;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger_info.pfnUserCallback = &Device::Impl::on_message;
  messenger_info.pUserData = &d;
  VkValidationFeatureEnableEXT sync_validation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  validation_features.enabledValidationFeatureCount = 1;
  validation_features.pEnabledValidationFeatures = &sync_validation;
  VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pApplicationInfo = &app;
  instance_info.enabledExtensionCount = uint32_t(s.extensions.size());
  instance_info.ppEnabledExtensionNames = s.extensions.data();
  instance_info.enabledLayerCount = uint32_t(s.layers.size());
  instance_info.ppEnabledLayerNames = s.layers.data();
  if (validation) {
    validation_features.pNext = &messenger_info;  // also catches messages from vkCreateInstance itself
    instance_info.pNext = &validation_features;
  }
  VkResult r = l.vkCreateInstance(&instance_info, nullptr, &d.instance);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateInstance");
#define VKPRIM_LOAD_INSTANCE(name) d.name = reinterpret_cast<PFN_##name>(l.gipa(d.instance, #name));
  VKPRIM_STANDALONE_INSTANCE(VKPRIM_LOAD_INSTANCE)
  if (validation) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        l.gipa(d.instance, "vkCreateDebugUtilsMessengerEXT"));
    d.destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        l.gipa(d.instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (create_messenger) create_messenger(d.instance, &messenger_info, nullptr, &d.messenger);
  }
  return {};
}

// Without a selection, the first Vulkan 1.1 device of the most preferred type (type_rank).
Result<uint32_t> preferred_device(const std::vector<VkPhysicalDeviceProperties>& props) {
  int chosen = -1;
  for (uint32_t i = 0; i < props.size(); ++i)
    if (props[i].apiVersion >= VK_API_VERSION_1_1 &&
        (chosen < 0 || type_rank(props[i].deviceType) < type_rank(props[chosen].deviceType)))
      chosen = int(i);
  if (chosen < 0) return make_error(Status::unsupported, "no Vulkan 1.1 device found");
  return uint32_t(chosen);
}

// DeviceOptions::select, else VKPRIM_DEVICE: an index, or else a case-insensitive name substring (the first
// device whose name holds it); with neither, preferred_device.
Result<uint32_t> select_device(const std::vector<VkPhysicalDeviceProperties>& props, std::string select) {
  const uint32_t count = uint32_t(props.size());
  if (select.empty())
    if (const char* env = std::getenv("VKPRIM_DEVICE")) select = env;
  if (select.empty()) return preferred_device(props);
  if (std::all_of(select.begin(), select.end(), [](unsigned char ch) { return std::isdigit(ch); })) {
    const unsigned long index = std::strtoul(select.c_str(), nullptr, 10);
    if (index >= count)
      return make_error(Status::invalid_argument, "device index ", index, " is out of range (", count, " devices)");
    return uint32_t(index);
  }
  for (uint32_t i = 0; i < count; ++i)
    if (lower(props[i].deviceName).find(lower(select)) != std::string::npos) return i;
  return make_error(Status::invalid_argument, "no Vulkan device name contains '", select, "'");
}

// The physical device, its properties and memory types.
Result<void> choose_physical_device(Device::Impl& d, const std::string& select) {
  uint32_t count = 0;
  d.vkEnumeratePhysicalDevices(d.instance, &count, nullptr);
  if (count == 0) return make_error(Status::unsupported, "no Vulkan physical device found");
  std::vector<VkPhysicalDevice> devices(count);
  d.vkEnumeratePhysicalDevices(d.instance, &count, devices.data());
  std::vector<VkPhysicalDeviceProperties> props(count);
  for (uint32_t i = 0; i < count; ++i) d.vkGetPhysicalDeviceProperties(devices[i], &props[i]);
  auto chosen = select_device(props, select);
  if (!chosen) return chosen.error();
  d.physical_device = devices[chosen.value()];
  d.properties = props[chosen.value()];
  d.vkGetPhysicalDeviceMemoryProperties(d.physical_device, &d.memory);
  return {};
}

// The first queue family with compute.
Result<void> choose_queue_family(Device::Impl& d) {
  uint32_t count = 0;
  d.vkGetPhysicalDeviceQueueFamilyProperties(d.physical_device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  d.vkGetPhysicalDeviceQueueFamilyProperties(d.physical_device, &count, families.data());
  for (uint32_t i = 0; i < count; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      d.family = i;
      return {};
    }
  return make_error(Status::unsupported, "device has no compute queue");
}

// What vkCreateDevice enables. The same chain and extension list go to the Context, which reads what was
// enabled from them.
struct DeviceSetup {
  VkPhysicalDeviceFeatures2* features = nullptr;  // d.requirements' chain
  std::vector<const char*> extensions;
  bool pipeline_statistics = false;  // DeviceOptions::pipeline_statistics, where the device supports it
};

// vkprim's device requirements, plus pipeline executable properties where asked for and supported.
Result<DeviceSetup> resolve_device(Device::Impl& d, uint32_t api_version, bool pipeline_statistics) {
  auto req = device_requirements(d.physical_device, d.loader->gipa, d.instance, api_version);
  if (!req) return std::move(req).error();
  d.requirements = std::move(req).value();
  DeviceSetup s;
  // features() relinks the chain, so it is taken once, before anything is appended.
  s.features = d.requirements.features();
  s.extensions = d.requirements.extensions;
  s.pipeline_statistics = pipeline_statistics && supports_pipeline_statistics(d);
  if (s.pipeline_statistics) {
    d.executable_info.pipelineExecutableInfo = VK_TRUE;
    d.executable_info.pNext = nullptr;
    auto* last = reinterpret_cast<VkBaseOutStructure*>(s.features);
    while (last->pNext) last = last->pNext;
    last->pNext = reinterpret_cast<VkBaseOutStructure*>(&d.executable_info);
    s.extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }
  return s;
}

// The device with one compute queue, its functions and the queue.
Result<void> create_logical_device(Device::Impl& d, const DeviceSetup& s) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = d.family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = s.features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = uint32_t(s.extensions.size());
  device_info.ppEnabledExtensionNames = s.extensions.data();
  VkResult r = d.vkCreateDevice(d.physical_device, &device_info, nullptr, &d.device);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateDevice");
#define VKPRIM_LOAD_DEVICE(name) d.name = reinterpret_cast<PFN_##name>(d.vkGetDeviceProcAddr(d.device, #name));
  VKPRIM_STANDALONE_DEVICE(VKPRIM_LOAD_DEVICE)
  d.vkGetDeviceQueue(d.device, d.family, 0, &d.queue);
  return {};
}

// The pool of submit()'s command buffer, which is re-recorded (Impl::submit_locked).
Result<void> create_command_pool(Device::Impl& d) {
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = d.family;
  VkResult r = d.vkCreateCommandPool(d.device, &pool_info, nullptr, &d.pool);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateCommandPool");
  return {};
}

// The persisted cache at `path`, or nothing unless its header matches this device and driver.
std::vector<char> read_pipeline_cache(const std::string& path, const VkPhysicalDeviceProperties& props) {
  if (path.empty()) return {};
  std::ifstream in(path, std::ios::binary);
  std::vector<char> data(std::istreambuf_iterator<char>(in), (std::istreambuf_iterator<char>()));
  VkPipelineCacheHeaderVersionOne header{};
  if (data.size() < sizeof(header)) return {};
  std::memcpy(&header, data.data(), sizeof(header));
  if (header.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || header.vendorID != props.vendorID ||
      header.deviceID != props.deviceID ||
      std::memcmp(header.pipelineCacheUUID, props.pipelineCacheUUID, VK_UUID_SIZE) != 0)
    return {};
  return data;
}

// The device's pipeline cache, seeded from the persisted one where it matches; empty if the driver
// refuses that data. Never an error: without a cache, pipelines are only slower to build.
void create_pipeline_cache(Device::Impl& d, bool persistent) {
  d.pipeline_cache_file = persistent ? cache_path(d.properties) : std::string();
  const std::vector<char> cache_data = read_pipeline_cache(d.pipeline_cache_file, d.properties);
  VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  cache_info.initialDataSize = cache_data.size();
  cache_info.pInitialData = cache_data.empty() ? nullptr : cache_data.data();
  if (d.vkCreatePipelineCache(d.device, &cache_info, nullptr, &d.pipeline_cache) != VK_SUCCESS) {
    cache_info.initialDataSize = 0;
    cache_info.pInitialData = nullptr;
    d.vkCreatePipelineCache(d.device, &cache_info, nullptr, &d.pipeline_cache);
  }
}

// The Context borrows the device with what was enabled on it.
ContextCreateInfo context_info(const Device::Impl& d, const DeviceOptions& options, const InstanceSetup& instance,
                               const DeviceSetup& device) {
  ContextCreateInfo ctx{};
  ctx.instance = d.instance;
  ctx.physical_device = d.physical_device;
  ctx.device = d.device;
  ctx.queue_family_index = d.family;
  ctx.get_instance_proc_addr = d.loader->gipa;
  ctx.pipeline_cache = d.pipeline_cache;
  ctx.api_version = instance.api_version;
  ctx.enabled_features = device.features;
  ctx.enabled_device_extensions = device.extensions;
  ctx.debug_utils_enabled = instance.debug_utils;
  ctx.options = options.options;
  ctx.testing = options.testing;
  if (device.pipeline_statistics) ctx.options.capture_pipeline_statistics = true;
  return ctx;
}

}  // namespace

// Each step fails with the first error it meets; ~Impl releases whatever the earlier steps made.
Result<std::unique_ptr<Device>> Device::create(const DeviceOptions& options) {
  auto ld = loader();
  if (!ld) return std::move(ld).error();
  auto impl = std::make_unique<Impl>();
  Impl& d = *impl;
  d.loader = ld.value();

  auto instance_setup = resolve_instance(*d.loader, options.validation);
  if (!instance_setup) return std::move(instance_setup).error();
  if (auto made = create_instance(d, instance_setup.value(), options.validation); !made) return made.error();
  if (auto chosen = choose_physical_device(d, options.select); !chosen) return chosen.error();
  if (auto found = choose_queue_family(d); !found) return found.error();

  auto device_setup = resolve_device(d, instance_setup.value().api_version, options.pipeline_statistics);
  if (!device_setup) return std::move(device_setup).error();
  if (auto made = create_logical_device(d, device_setup.value()); !made) return made.error();
  if (auto made = create_command_pool(d); !made) return made.error();
  create_pipeline_cache(d, options.persistent_pipeline_cache);

  auto context = Context::create(context_info(d, options, instance_setup.value(), device_setup.value()));
  if (!context) return std::move(context).error();
  d.context = std::move(context).value();
  return std::unique_ptr<Device>(new Device(std::move(impl)));
}

Context& Device::context() { return *impl_->context; }
const Context& Device::context() const { return *impl_->context; }
VkInstance Device::instance() const { return impl_->instance; }
VkPhysicalDevice Device::physical_device() const { return impl_->physical_device; }
VkDevice Device::device() const { return impl_->device; }
VkQueue Device::queue() const { return impl_->queue; }
uint32_t Device::queue_family_index() const { return impl_->family; }
PFN_vkGetInstanceProcAddr Device::get_instance_proc_addr() const { return impl_->loader->gipa; }

uint64_t Device::validation_message_count() const { return impl_->message_count.load(); }
std::vector<std::string> Device::validation_messages() const {
  std::lock_guard<std::mutex> lock(impl_->message_mutex);
  return impl_->messages;
}
void Device::clear_validation_messages() const {
  std::lock_guard<std::mutex> lock(impl_->message_mutex);
  impl_->messages.clear();
  impl_->message_count = 0;
}

Result<Buffer> Device::create_buffer(VkDeviceSize bytes) const {
  if (bytes == 0) return make_error(Status::invalid_argument, "create_buffer: size 0");
  Buffer b;
  auto made = impl_->make_buffer(bytes,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
                                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, b.buffer_, b.memory_);
  if (!made) return made.error();
  b.device_ = this;
  b.size_ = bytes;
  return b;
}

namespace {
constexpr VkDeviceSize kStagingChunk = VkDeviceSize(64) << 20;

Result<void> check_transfer(const Buffer& buffer, VkDeviceSize bytes, VkDeviceSize offset, const char* what) {
  if (!buffer.handle()) return make_error(Status::invalid_argument, what, ": buffer is empty");
  if (offset > buffer.size() || bytes > buffer.size() - offset)
    return make_error(Status::invalid_argument, what, ": ", bytes, " bytes at offset ", offset,
                      " do not fit a buffer of ", buffer.size(), " bytes");
  return {};
}
}  // namespace

Result<void> Device::upload(const Buffer& dst, const void* src, VkDeviceSize bytes, VkDeviceSize offset) const {
  if (auto ok = check_transfer(dst, bytes, offset, "upload"); !ok) return ok;
  std::lock_guard<std::mutex> lock(impl_->submit_mutex);
  for (VkDeviceSize done = 0; done < bytes;) {
    const VkDeviceSize chunk = std::min(kStagingChunk, bytes - done);
    if (auto ok = impl_->ensure_staging(std::min(kStagingChunk, bytes)); !ok) return ok;
    std::memcpy(impl_->staging_map, static_cast<const char*>(src) + done, chunk);
    auto ok = impl_->submit_locked([&](VkCommandBuffer cmd) {
      VkBufferCopy region{0, offset + done, chunk};
      impl_->vkCmdCopyBuffer(cmd, impl_->staging, dst.handle(), 1, &region);
    });
    if (!ok) return ok;
    done += chunk;
  }
  return {};
}

Result<void> Device::download(const Buffer& src, void* dst, VkDeviceSize bytes, VkDeviceSize offset) const {
  if (auto ok = check_transfer(src, bytes, offset, "download"); !ok) return ok;
  std::lock_guard<std::mutex> lock(impl_->submit_mutex);
  for (VkDeviceSize done = 0; done < bytes;) {
    const VkDeviceSize chunk = std::min(kStagingChunk, bytes - done);
    if (auto ok = impl_->ensure_staging(std::min(kStagingChunk, bytes)); !ok) return ok;
    auto ok = impl_->submit_locked([&](VkCommandBuffer cmd) {
      VkBufferCopy region{offset + done, 0, chunk};
      impl_->vkCmdCopyBuffer(cmd, src.handle(), impl_->staging, 1, &region);
    });
    if (!ok) return ok;
    std::memcpy(static_cast<char*>(dst) + done, impl_->staging_map, chunk);
    done += chunk;
  }
  return {};
}

Result<void> Device::fill(const Buffer& dst, uint32_t word, VkDeviceSize bytes, VkDeviceSize offset) const {
  if (bytes == VK_WHOLE_SIZE) bytes = dst.size() > offset ? dst.size() - offset : 0;
  if (auto ok = check_transfer(dst, bytes, offset, "fill"); !ok) return ok;
  if (bytes % 4 || offset % 4) return make_error(Status::invalid_argument, "fill: size and offset must be multiples of 4");
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(impl_->submit_mutex);
  return impl_->submit_locked([&](VkCommandBuffer cmd) { impl_->vkCmdFillBuffer(cmd, dst.handle(), offset, bytes, word); });
}

Result<void> Device::submit(const std::function<void(VkCommandBuffer)>& record) const {
  std::lock_guard<std::mutex> lock(impl_->submit_mutex);
  return impl_->submit_locked(record);
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_), buffer_(other.buffer_), memory_(other.memory_), size_(other.size_) {
  other.device_ = nullptr;
  other.buffer_ = VK_NULL_HANDLE;
  other.memory_ = VK_NULL_HANDLE;
  other.size_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    std::swap(device_, other.device_);
    std::swap(buffer_, other.buffer_);
    std::swap(memory_, other.memory_);
    std::swap(size_, other.size_);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() noexcept {
  if (device_ && buffer_) {
    const Device::Impl& d = *device_->impl_;
    d.vkDestroyBuffer(d.device, buffer_, nullptr);
    d.vkFreeMemory(d.device, memory_, nullptr);
  }
  device_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  size_ = 0;
}

BufferRange Buffer::range(VkDeviceSize offset, VkDeviceSize size) const {
  const VkDeviceSize available = offset <= size_ ? size_ - offset : 0;
  return BufferRange{buffer_, offset, size == VK_WHOLE_SIZE ? available : size};
}

}  // namespace vkprim
