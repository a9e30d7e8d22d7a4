// particles: vkprim inside an engine's frame.
//
// The program plays an engine: it loads Vulkan with volk, creates its own instance (validation and
// synchronization validation where installed) and device, owns every buffer, its command buffer and
// fence, and runs its own compute shader (update.comp: particle update). In the SAME command buffer it
// then lends the device to vkprim:
//   1. Reduce  min/max of the particles' x and y          -> world bounds
//   2. Select  live particles' cell keys, and their ids as indices (flagged) -> compacted, live count on the GPU
//   3. RadixSort (cell key, id) pairs, count read from the GPU (record_indirect)
//   4. Scan    exclusive sum of the live-per-cell histogram -> each cell's first index in the sorted list
// One submit, one fence wait; then every stage is checked against a CPU replay of the same frame.
// Exit status 0 only if everything matches and the validation layers said nothing.
#include <volk.h>  // first: volk defines VK_NO_PROTOTYPES before any Vulkan header is seen

#include <vkprim/vkprim.hpp>

#include "update_comp.h"  // particles_update_spv[]: update.comp compiled at build time

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// ---- The simulation (shared by GPU and CPU) ------------------------------------------------------
// Powers of two everywhere so the CPU replays the shader bit for bit (see update.comp).
constexpr float kDt = 1.0f / 64.0f;
constexpr uint32_t kSteps = 16;               // 0.25 s per frame
constexpr float kGravityDt = -8.0f * kDt;     // -0.125, exact
constexpr float kWorldHalf = 64.0f;           // world box [-64, 64]^2
constexpr uint32_t kGrid = 64;                // 64 x 64 cells ...
constexpr float kInvCell = 0.5f;              // ... of 2 x 2 units
constexpr uint32_t kCells = kGrid * kGrid;
constexpr uint32_t kKeyBits = 12;             // cell keys < 2^12: the sort looks at 12 bits only (2 digits)
static_assert(kCells <= (1u << kKeyBits));

struct Particle {  // matches update.comp's std430 struct
  float px, py, vx, vy, life, unused;
};
static_assert(sizeof(Particle) == 24);

struct PushConstants {
  uint32_t count, steps;
  float dt, gravity_dt, world_half, inv_cell;
  uint32_t grid;
};

// Initial state: multiples of 1/64 (positions), 1/128 (velocities) and 1/1024 (life): exact floats.
// About a tenth start dead, another ~15% die during the frame.
std::vector<Particle> make_particles(uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi, float scale) { return float(lo + int(rng() % uint32_t(hi - lo))) * scale; };
  std::vector<Particle> p(n);
  for (Particle& q : p)
    q = {pick(-3968, 3968, 1 / 64.0f), pick(-3968, 3968, 1 / 64.0f), pick(-2048, 2048, 1 / 128.0f),
         pick(-2048, 2048, 1 / 128.0f), pick(-128, 1280, 1 / 1024.0f), 0.0f};
  return p;
}

// The CPU replay of update.comp: same operations in the same order, each rounded once.
struct CpuFrame {
  std::vector<Particle> particles;
  std::vector<float> x, y;
  std::vector<uint32_t> alive, key, cell_count;  // cell_count: kCells + 1 (the last stays 0)
};
CpuFrame cpu_update(std::vector<Particle> particles) {
  const size_t n = particles.size();
  CpuFrame f;
  f.x.resize(n), f.y.resize(n), f.alive.resize(n), f.key.resize(n), f.cell_count.assign(kCells + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    Particle& p = particles[i];
    for (uint32_t s = 0; s < kSteps && p.life > 0.0f; ++s) {
      p.vy = p.vy + kGravityDt;
      p.px = p.px + p.vx * kDt;
      p.py = p.py + p.vy * kDt;
      const float wall = 2.0f * kWorldHalf;
      if (p.px < -kWorldHalf) p.px = -wall - p.px, p.vx = -p.vx;
      if (p.px > kWorldHalf) p.px = wall - p.px, p.vx = -p.vx;
      if (p.py < -kWorldHalf) p.py = -wall - p.py, p.vy = -p.vy;
      if (p.py > kWorldHalf) p.py = wall - p.py, p.vy = -p.vy;
      p.life = p.life - kDt;
    }
    p.unused = 0.0f;
    const uint32_t cx = std::min(uint32_t((p.px + kWorldHalf) * kInvCell), kGrid - 1);
    const uint32_t cy = std::min(uint32_t((p.py + kWorldHalf) * kInvCell), kGrid - 1);
    f.x[i] = p.px, f.y[i] = p.py, f.key[i] = cy * kGrid + cx, f.alive[i] = p.life > 0.0f;
    if (f.alive[i]) ++f.cell_count[f.key[i]];
  }
  f.particles = std::move(particles);
  return f;
}

// ---- Error handling: the example throws internally; main prints and exits 1 ----------------------
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw Failure(std::string(what) + " failed: VkResult " + std::to_string(int(r)));
}
void vkprim_check(const vkprim::Result<void>& r, const char* what) {
  if (!r) throw Failure(std::string(what) + ": " + vkprim::to_string(r.status()) + ": " + r.message());
}
template <class T>
T vkprim_take(vkprim::Result<T> r, const char* what) {
  if (!r) throw Failure(std::string(what) + ": " + vkprim::to_string(r.status()) + ": " + r.error().message);
  return std::move(r).value();
}

// ---- The engine: instance, device, queue, validation messages -------------------------------------
// Validation warnings and errors, counted until the instance is gone: any one fails the run.
std::atomic<uint64_t> g_validation_messages{0};

struct Engine {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0, api_version = VK_API_VERSION_1_1;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  bool validation = false, debug_utils = false;

  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
    ++g_validation_messages;
    std::fprintf(stderr, "VALIDATION: %s\n", data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
  }

  void create_instance() {
    vk_check(volkInitialize(), "volkInitialize (is a Vulkan loader installed?)");
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_1) throw Failure("vkprim needs a Vulkan 1.1 loader");
    api_version = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);

    uint32_t count = 0;
    vk_check(vkEnumerateInstanceLayerProperties(&count, nullptr), "vkEnumerateInstanceLayerProperties");
    std::vector<VkLayerProperties> layers(count);
    vk_check(vkEnumerateInstanceLayerProperties(&count, layers.data()), "vkEnumerateInstanceLayerProperties");
    for (const auto& l : layers) validation |= std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    vk_check(vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr), "vkEnumerateInstanceExtensionProperties");
    std::vector<VkExtensionProperties> available(count);
    vk_check(vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data()),
             "vkEnumerateInstanceExtensionProperties");
    for (const auto& e : available) debug_utils |= std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;

    std::vector<const char*> extensions, enabled_layers;
    if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (validation) {
      enabled_layers.push_back("VK_LAYER_KHRONOS_validation");
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);  // provided by the layer
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkprim particles example";
    app.apiVersion = api_version;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    messenger_info.pfnUserCallback = &Engine::on_message;
    // Synchronization validation checks the barriers this file and vkprim record.
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
    if (validation) info.pNext = &features;
    if (validation && debug_utils) features.pNext = &messenger_info;  // also catches vkCreate/DestroyInstance
    vk_check(vkCreateInstance(&info, nullptr, &instance), "vkCreateInstance");
    volkLoadInstance(instance);
    if (debug_utils)
      vk_check(vkCreateDebugUtilsMessengerEXT(instance, &messenger_info, nullptr, &messenger),
               "vkCreateDebugUtilsMessengerEXT");
  }

  // VKPRIM_DEVICE (an index or a name substring) picks the device, else the first Vulkan 1.1 one.
  void pick_physical_device() {
    uint32_t count = 0;
    vk_check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    vk_check(vkEnumeratePhysicalDevices(instance, &count, devices.data()), "vkEnumeratePhysicalDevices");
    const char* env = std::getenv("VKPRIM_DEVICE");
    const std::string want = env ? env : "";
    for (uint32_t i = 0; i < count && !physical_device; ++i) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devices[i], &p);
      const bool chosen = want.empty() ? p.apiVersion >= VK_API_VERSION_1_1
                                       : want == std::to_string(i) || std::strstr(p.deviceName, want.c_str());
      if (chosen) physical_device = devices[i], properties = p;
    }
    if (!physical_device) throw Failure("no Vulkan 1.1 device" + (want.empty() ? "" : " matches VKPRIM_DEVICE=" + want));
    vkGetPhysicalDeviceMemoryProperties(physical_device, &memory);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &count, families.data());
    for (family = 0; family < count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT);) ++family;
    if (family == count) throw Failure("the device has no compute queue");
  }

  // The engine's own feature chain and device extensions; vkprim's requirements are merged into them.
  VkPhysicalDeviceFeatures2 device_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  std::vector<const char*> device_extensions;

  // The engine's device: its own features (none beyond core here) with what vkprim asked for merged in.
  void create_device(vkprim::DeviceRequirements& req) {
    vkprim_check(req.merge_into(device_features, device_extensions), "vkprim::DeviceRequirements::merge_into");
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &device_features;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.enabledExtensionCount = uint32_t(device_extensions.size());
    info.ppEnabledExtensionNames = device_extensions.data();
    vk_check(vkCreateDevice(physical_device, &info, nullptr, &device), "vkCreateDevice");
    volkLoadDevice(device);
    vkGetDeviceQueue(device, family, 0, &queue);
  }

  ~Engine() {
    if (device) vkDestroyDevice(device, nullptr);
    if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }
};

// A storage buffer the engine owns, mapped for the whole run: host-visible and coherent, device-local
// where such memory exists (lavapipe, integrated GPUs, resizable BAR). A discrete-GPU engine would keep
// these device-local and copy through staging; nothing below changes but two copies per direction.
struct Buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;

  Buffer(const Engine& e, VkDeviceSize bytes, VkBufferUsageFlags usage) : device(e.device), size(bytes) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = usage | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    vk_check(vkCreateBuffer(device, &info, nullptr, &buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffer, &req);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (VkMemoryPropertyFlags want : {host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, host})
      for (uint32_t i = 0; i < e.memory.memoryTypeCount && type == UINT32_MAX; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (e.memory.memoryTypes[i].propertyFlags & want) == want) type = i;
    if (type == UINT32_MAX) throw Failure("no host-visible coherent memory type for a buffer");
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    vk_check(vkAllocateMemory(device, &alloc, nullptr, &memory), "vkAllocateMemory");
    vk_check(vkBindBufferMemory(device, buffer, memory, 0), "vkBindBufferMemory");
    vk_check(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  }
  ~Buffer() {
    if (buffer) vkDestroyBuffer(device, buffer, nullptr);
    if (memory) vkFreeMemory(device, memory, nullptr);  // unmaps
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  vkprim::BufferRange range(VkDeviceSize offset = 0, VkDeviceSize bytes = VK_WHOLE_SIZE) const {
    return {buffer, offset, bytes == VK_WHOLE_SIZE ? size - offset : bytes};
  }
  template <class T>
  const T* as() const { return static_cast<const T*>(mapped); }
};

// Runs a clean-up at scope exit (also when a check throws).
struct Defer {
  std::function<void()> f;
  ~Defer() { f(); }
};

// The one kind of barrier this engine needs: a global memory barrier between two stage/access pairs.
void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
             VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}
constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;

// The engine's update pipeline: six storage buffers in set 0 and the push constants.
struct UpdatePipeline {
  VkDevice device = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  static constexpr uint32_t kBindings = 6;

  UpdatePipeline(const Engine& e, const Buffer* const (&buffers)[kBindings]) : device(e.device) {
    if (e.properties.limits.maxPerStageDescriptorStorageBuffers < kBindings)
      throw Failure("the update kernel needs 6 storage buffers per stage");
    VkDescriptorSetLayoutBinding bindings[kBindings];
    for (uint32_t b = 0; b < kBindings; ++b)
      bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = kBindings;
    set_info.pBindings = bindings;
    vk_check(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    vk_check(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout");

    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = sizeof(particles_update_spv);
    module_info.pCode = particles_update_spv;
    VkShaderModule module = VK_NULL_HANDLE;
    vk_check(vkCreateShaderModule(device, &module_info, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0,
                           VK_SHADER_STAGE_COMPUTE_BIT, module, "main", nullptr};
    pipeline_info.layout = layout;
    const VkResult created = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline);
    vkDestroyShaderModule(device, module, nullptr);
    vk_check(created, "vkCreateComputePipelines");

    VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBindings};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &pool_size;
    vk_check(vkCreateDescriptorPool(device, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &set_layout;
    vk_check(vkAllocateDescriptorSets(device, &alloc, &set), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo infos[kBindings];
    VkWriteDescriptorSet writes[kBindings];
    for (uint32_t b = 0; b < kBindings; ++b) {
      infos[b] = {buffers[b]->buffer, 0, VK_WHOLE_SIZE};
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, set, b, 0, 1,
                   VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nullptr, &infos[b], nullptr};
    }
    vkUpdateDescriptorSets(device, kBindings, writes, 0, nullptr);
  }
  ~UpdatePipeline() {
    vkDestroyDescriptorPool(device, pool, nullptr);
    vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
    vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
  }
};

// One scratch buffer for every vkprim record in the frame, each record its own aligned range: stages
// that share no data then need no barrier between them for scratch's sake.
struct ScratchArena {
  std::vector<vkprim::ScratchRequirements> needs;
  std::vector<VkDeviceSize> offsets;
  VkDeviceSize size = 0;
  VkBufferUsageFlags usage = 0;
  size_t add(const vkprim::ScratchRequirements& need) {
    size = (size + need.alignment - 1) / need.alignment * need.alignment;
    offsets.push_back(size);
    needs.push_back(need);
    size += std::max<VkDeviceSize>(need.size, 16);
    usage |= need.usage;
    return offsets.size() - 1;
  }
};

struct Options {
  uint32_t count = 100000;
  uint32_t seed = 2024;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--count" || arg == "--seed") && i + 1 < argc) {
      const long long v = std::atoll(argv[++i]);
      if (v < 1 || v > (1ll << 24)) throw Failure(arg + " must be in 1..2^24");
      (arg == "--count" ? o.count : o.seed) = uint32_t(v);
    } else {
      throw Failure("usage: particles [--count N (default 100000)] [--seed S]");
    }
  }
  return o;
}

// A mismatch is printed with where it is; the run goes on to check the other stages.
int g_mismatches = 0;
template <class T>
void expect_equal(const char* stage, const T* got, const T* want, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {  // bit-exact
      std::fprintf(stderr, "MISMATCH in %s at %zu of %zu\n", stage, i, count);
      ++g_mismatches;
      return;
    }
}

int run(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t n = opt.count;
  Engine engine;
  engine.create_instance();
  engine.pick_physical_device();

  // vkprim says what to enable at vkCreateDevice (the memory model for its single-pass algorithms, ...).
  // merge_into may link structs of `req` into the engine's chain: `req` stays alive (and unmoved) as long
  // as the context, which reads the chain.
  vkprim::DeviceRequirements req = vkprim_take(
      vkprim::device_requirements(engine.physical_device, vkGetInstanceProcAddr, engine.instance, engine.api_version),
      "vkprim::device_requirements");
  engine.create_device(req);

  vkprim::ContextCreateInfo info;
  info.instance = engine.instance;
  info.physical_device = engine.physical_device;
  info.device = engine.device;
  info.queue_family_index = engine.family;
  info.get_instance_proc_addr = vkGetInstanceProcAddr;
  info.api_version = engine.api_version;
  info.enabled_features = &engine.device_features;
  info.enabled_device_extensions = engine.device_extensions;
  info.debug_utils_enabled = engine.debug_utils;  // vkprim labels its passes for captures
  std::unique_ptr<vkprim::Context> context = vkprim_take(vkprim::Context::create(info), "vkprim::Context::create");
  vkprim::Context& ctx = *context;

  // Plans: created once at load time (they build their pipelines now), recorded every frame.
  using namespace vkprim;
  Reduce reduce_min = vkprim_take(Reduce::create(ctx, {DataType::f32, Op::min, n}), "Reduce::create(min)");
  Reduce reduce_max = vkprim_take(Reduce::create(ctx, {DataType::f32, Op::max, n}), "Reduce::create(max)");
  SelectDesc select_desc;
  select_desc.type = DataType::u32;
  select_desc.max_count = n;
  select_desc.predicate = SelectPredicate::flagged;
  Select select = vkprim_take(Select::create(ctx, select_desc), "Select::create");
  // The live particles' ids are their positions: SelectOutput::indices writes them without an id buffer
  // (and, flagged, without reading any input).
  select_desc.output = SelectOutput::indices;
  Select select_ids = vkprim_take(Select::create(ctx, select_desc), "Select::create(indices)");
  SortDesc sort_desc;
  sort_desc.key_type = DataType::u32;
  sort_desc.value_size = 4;  // the particle id rides along
  sort_desc.max_count = n;
  sort_desc.end_bit = kKeyBits;
  RadixSort sort = vkprim_take(RadixSort::create(ctx, sort_desc), "RadixSort::create");
  ScanDesc scan_desc;
  scan_desc.type = DataType::u32;
  scan_desc.op = Op::add;
  scan_desc.kind = ScanKind::exclusive;
  scan_desc.max_count = kCells + 1;  // + 1: offsets[kCells] = live count, so cell c is [offsets[c], offsets[c+1])
  Scan scan = vkprim_take(Scan::create(ctx, scan_desc), "Scan::create");

  ScratchArena arena;
  const size_t s_reduce[4] = {arena.add(reduce_min.scratch_requirements()), arena.add(reduce_min.scratch_requirements()),
                              arena.add(reduce_max.scratch_requirements()), arena.add(reduce_max.scratch_requirements())};
  const size_t s_select[2] = {arena.add(select.scratch_requirements()), arena.add(select_ids.scratch_requirements())};
  const size_t s_sort = arena.add(sort.scratch_requirements());
  const size_t s_scan = arena.add(scan.scratch_requirements());

  // The engine's buffers. The small results get 256-byte slots (the largest minStorageBufferOffsetAlignment)
  // so that a later engine pass can bind any one of them as a descriptor at its own offset.
  // Scratch gets exactly the usage the plans asked for; the data buffers are also cleared and copied.
  const VkDeviceSize n4 = VkDeviceSize(n) * 4;
  const VkBufferUsageFlags data = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  Buffer particles(engine, VkDeviceSize(n) * sizeof(Particle), data);
  Buffer pos_x(engine, n4, data), pos_y(engine, n4, data), alive(engine, n4, data), cell_key(engine, n4, data);
  Buffer cell_count(engine, (kCells + 1) * 4, data), cell_offset(engine, (kCells + 1) * 4, data);
  Buffer live_key(engine, n4, data), live_id(engine, n4, data);  // Select's outputs, sorted in place
  Buffer select_copy(engine, 2 * n4, data);                      // Select's outputs before the sort, to check
  enum Slot { min_x, min_y, max_x, max_y, live_count, live_count_ids, slots };
  Buffer results(engine, slots * 256, data);
  Buffer scratch(engine, arena.size, arena.usage);
  auto slot = [&](Slot s) { return results.range(s * 256, 4); };
  auto scratch_range = [&](size_t i) { return scratch.range(arena.offsets[i], arena.needs[i].size); };

  const std::vector<Particle> initial = make_particles(n, opt.seed);
  std::memcpy(particles.mapped, initial.data(), particles.size);

  UpdatePipeline update(engine, {&particles, &pos_x, &pos_y, &alive, &cell_key, &cell_count});
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = engine.family;
  VkCommandPool pool = VK_NULL_HANDLE;
  vk_check(vkCreateCommandPool(engine.device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
  const Defer destroy_pool{[&] { vkDestroyCommandPool(engine.device, pool, nullptr); }};
  VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cmd_info.commandPool = pool;
  cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cmd_info.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  vk_check(vkAllocateCommandBuffers(engine.device, &cmd_info, &cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  vk_check(vkCreateFence(engine.device, &fence_info, nullptr, &fence), "vkCreateFence");
  const Defer destroy_fence{[&] { vkDestroyFence(engine.device, fence, nullptr); }};

  // ---- The frame: one command buffer --------------------------------------------------------------
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");

  // Engine: clear the histogram, then the update kernel (host writes are visible through the submit).
  vkCmdFillBuffer(cmd, cell_count.buffer, 0, VK_WHOLE_SIZE, 0);
  barrier(cmd, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, kCompute, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, update.pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, update.layout, 0, 1, &update.set, 0, nullptr);
  const PushConstants push{n, kSteps, kDt, kGravityDt, kWorldHalf, kInvCell, kGrid};
  vkCmdPushConstants(cmd, update.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
  vkCmdDispatch(cmd, (n + 255) / 256, 1, 1);
  // vkprim's contract: the caller makes the inputs' writes visible to compute-shader reads.
  barrier(cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, VK_ACCESS_SHADER_READ_BIT);

  // 1. Bounds. Each record places its own barriers between its passes; the four share no memory.
  vkprim_check(reduce_min.record(cmd, pos_x.range(), slot(min_x), n, scratch_range(s_reduce[0])), "Reduce min x");
  vkprim_check(reduce_min.record(cmd, pos_y.range(), slot(min_y), n, scratch_range(s_reduce[1])), "Reduce min y");
  vkprim_check(reduce_max.record(cmd, pos_x.range(), slot(max_x), n, scratch_range(s_reduce[2])), "Reduce max x");
  vkprim_check(reduce_max.record(cmd, pos_y.range(), slot(max_y), n, scratch_range(s_reduce[3])), "Reduce max y");

  // 2. Live particles: the keys, and the ids (indices) with the same flags, so both lists line up.
  const SelectOperands key_operands{.input = cell_key.range(),
                                    .flags = alive.range(),
                                    .output = live_key.range(),
                                    .selected_count = slot(live_count),
                                    .scratch = scratch_range(s_select[0])};
  vkprim_check(select.record(cmd, key_operands, n), "Select keys");
  const SelectOperands id_operands{.input = {},  // indices of the flagged predicate read no input
                                   .flags = alive.range(),
                                   .output = live_id.range(),
                                   .selected_count = slot(live_count_ids),
                                   .scratch = scratch_range(s_select[1])};
  vkprim_check(select_ids.record(cmd, id_operands, n), "Select ids");
  // Select wrote output and count with compute shaders: the sort reads them (and the count) in compute.
  // Only this example also copies Select's output aside, to check it before the sort overwrites it.
  barrier(cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute | kTransfer,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  const VkBufferCopy copies[2] = {{0, 0, n4}, {0, n4, n4}};
  vkCmdCopyBuffer(cmd, live_key.buffer, select_copy.buffer, 1, &copies[0]);
  vkCmdCopyBuffer(cmd, live_id.buffer, select_copy.buffer, 1, &copies[1]);
  barrier(cmd, kTransfer, 0, kCompute, 0);  // write-after-read: an execution dependency is enough

  // 3. Sort the live (key, id) pairs by cell, stably; the count comes from Select on the GPU.
  vkprim_check(sort.record_indirect(cmd, live_key.range(), live_id.range(), slot(live_count), scratch_range(s_sort)),
               "RadixSort::record_indirect");

  // 4. Cell offsets: exclusive sum of the histogram (visible since the barrier after the update). The grid
  //    has a fixed number of cells, so the count is known on the CPU: plain record, no count buffer.
  vkprim_check(scan.record(cmd, cell_count.range(), cell_offset.range(), kCells + 1, scratch_range(s_scan)),
               "Scan exclusive");

  barrier(cmd, kCompute | kTransfer, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");

  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  const auto t_submit = std::chrono::steady_clock::now();
  vk_check(vkQueueSubmit(engine.queue, 1, &submit, fence), "vkQueueSubmit");
  vk_check(vkWaitForFences(engine.device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  // The frame has completed, so no pending command buffer holds a record of these plans: they take back the
  // descriptor sets their records wrote (there are some only without push descriptors). With frames in
  // flight, an engine keeps plans per frame and releases a frame's plans when its fence signals.
  reduce_min.release_descriptor_sets();
  reduce_max.release_descriptor_sets();
  select.release_descriptor_sets();
  select_ids.release_descriptor_sets();
  sort.release_descriptor_sets();
  scan.release_descriptor_sets();
  const double gpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_submit).count();

  // ---- Check every stage against the CPU replay ---------------------------------------------------
  const CpuFrame cpu = cpu_update(initial);
  expect_equal("update: particles", particles.as<Particle>(), cpu.particles.data(), n);
  expect_equal("update: position x", pos_x.as<float>(), cpu.x.data(), n);
  expect_equal("update: position y", pos_y.as<float>(), cpu.y.data(), n);
  expect_equal("update: alive flags", alive.as<uint32_t>(), cpu.alive.data(), n);
  expect_equal("update: cell keys", cell_key.as<uint32_t>(), cpu.key.data(), n);
  expect_equal("update: cell histogram", cell_count.as<uint32_t>(), cpu.cell_count.data(), kCells + 1);

  auto result = [&](Slot s) { return results.as<uint32_t>()[s * 64]; };
  auto result_f = [&](Slot s) { return results.as<float>()[s * 64]; };
  const float want_bounds[4] = {*std::min_element(cpu.x.begin(), cpu.x.end()), *std::min_element(cpu.y.begin(), cpu.y.end()),
                                *std::max_element(cpu.x.begin(), cpu.x.end()), *std::max_element(cpu.y.begin(), cpu.y.end())};
  for (Slot s : {min_x, min_y, max_x, max_y}) {
    const float got = result_f(s);
    expect_equal("reduce: bounds", &got, &want_bounds[s], 1);
  }

  std::vector<uint32_t> want_key, want_id;  // the live particles in id order
  for (uint32_t i = 0; i < n; ++i)
    if (cpu.alive[i]) want_key.push_back(cpu.key[i]), want_id.push_back(i);
  const uint32_t live = uint32_t(want_id.size());
  const uint32_t got_counts[2] = {result(live_count), result(live_count_ids)}, want_counts[2] = {live, live};
  expect_equal("select: live count", got_counts, want_counts, 2);
  expect_equal("select: live keys", select_copy.as<uint32_t>(), want_key.data(), live);
  expect_equal("select: live ids", select_copy.as<uint32_t>() + n, want_id.data(), live);

  std::vector<uint32_t> order(live);  // std::stable_sort of (key, id) pairs by key
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return want_key[a] < want_key[b]; });
  std::vector<uint32_t> sorted_key(live), sorted_id(live);
  for (uint32_t j = 0; j < live; ++j) sorted_key[j] = want_key[order[j]], sorted_id[j] = want_id[order[j]];
  expect_equal("sort: keys", live_key.as<uint32_t>(), sorted_key.data(), live);
  expect_equal("sort: ids", live_id.as<uint32_t>(), sorted_id.data(), live);

  std::vector<uint32_t> want_offset(kCells + 1);
  std::exclusive_scan(cpu.cell_count.begin(), cpu.cell_count.end(), want_offset.begin(), 0u);
  expect_equal("scan: cell offsets", cell_offset.as<uint32_t>(), want_offset.data(), kCells + 1);
  // What an engine uses the result for: cell c's particles are sorted[offsets[c] .. offsets[c + 1]).
  const uint32_t* offsets = cell_offset.as<uint32_t>();
  bool grid_ok = offsets[kCells] == live;
  for (uint32_t c = 0; c < kCells && grid_ok; ++c)
    for (uint32_t j = offsets[c]; j < offsets[c + 1] && grid_ok; ++j) grid_ok = j < live && live_key.as<uint32_t>()[j] == c;
  if (!grid_ok) std::fprintf(stderr, "MISMATCH: the cell offsets do not index the sorted keys\n"), ++g_mismatches;

  uint32_t occupied = 0, largest = 0;  // from the GPU's offsets, as the engine would read them
  for (uint32_t c = 0; c < kCells; ++c)
    occupied += offsets[c + 1] > offsets[c], largest = std::max(largest, offsets[c + 1] - offsets[c]);

  const uint32_t v = engine.properties.apiVersion;
  std::printf("device:    %s (Vulkan %u.%u, %s)\n", ctx.capabilities().device_name.c_str(), VK_API_VERSION_MAJOR(v),
              VK_API_VERSION_MINOR(v), engine.validation ? "validation + synchronization validation" : "no validation layer");
  std::printf("particles: %u, live after %u steps of 1/64 s: %u\n", n, kSteps, result(live_count));
  std::printf("bounds:    x [%g, %g]  y [%g, %g]\n", result_f(min_x), result_f(max_x), result_f(min_y), result_f(max_y));
  std::printf("grid:      %ux%u cells, %u occupied, largest holds %u particles\n", kGrid, kGrid, occupied, largest);
  std::printf("vkprim:    reduce %s, select %s, sort %s (indirect count, %u digit passes), scan %s\n",
              to_string(reduce_min.algorithm()), to_string(select.algorithm()), to_string(sort.algorithm()),
              sort.digit_passes(), to_string(scan.algorithm()));

  const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("time:      one submit %.1f ms, whole run %.0f ms\n", gpu_ms, total_ms);
  std::printf("%s\n", g_mismatches ? "MISMATCHES: see stderr" : "all stages match the CPU");
  return g_mismatches ? 1 : 0;
  // On return, in reverse order: fence, pool, pipeline, buffers, plans, the context (before the device),
  // then the device and the instance.
}

}  // namespace

int main(int argc, char** argv) {
  int status = 1;
  try {
    status = run(parse_options(argc, argv));  // everything Vulkan is destroyed when it returns
  } catch (const Failure& f) {
    std::fprintf(stderr, "particles: %s\n", f.what());
  }
  if (g_validation_messages) {
    std::fprintf(stderr, "particles: %llu validation message(s): failing\n",
                 static_cast<unsigned long long>(g_validation_messages.load()));
    status = 1;
  }
  return status;
}
