// vkprim/device.hpp — a standalone Vulkan device for tools, tests and apps without an engine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

class Device;

// A device-local storage buffer (also transfer src/dst), freed when the Buffer is destroyed.
// Move-only; must not outlive its Device.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // A range of this buffer with an explicit size, so plans can check it is large enough.
  BufferRange range(VkDeviceSize offset = 0, VkDeviceSize size = VK_WHOLE_SIZE) const;

 private:
  friend class Device;
  const Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void release() noexcept;
};

struct DeviceInfo {
  uint32_t index;
  std::string name;
  VkPhysicalDeviceType type;
  uint32_t api_version;
};

// select: a device index or a name substring (case-insensitive). Empty: env VKPRIM_DEVICE, else
// discrete > integrated > virtual > cpu. validation: Khronos validation layer with synchronization
// validation; every warning or error is counted (validation_messages()) and printed to stderr.
struct DeviceOptions {
  std::string select;
  bool validation = false;
  bool persistent_pipeline_cache = true;  // $XDG_CACHE_HOME (or ~/.cache)/vkprim-pipelines-<vendor>-<device>.bin
  // Where the device supports VK_KHR_pipeline_executable_properties: enable it (and pipelineExecutableInfo)
  // and set options.capture_pipeline_statistics, so Context::kernel_statistics() reports every pipeline.
  // Elsewhere nothing changes (no error).
  bool pipeline_statistics = false;
  ContextOptions options{};
  detail::Testing testing{};  // test hooks (context.hpp); leave default
};

class Device {
 public:
  static Result<std::unique_ptr<Device>> create(const DeviceOptions& options = {});
  // Every physical device the loader sees (for `vkprim info`); creates no VkDevice.
  static Result<std::vector<DeviceInfo>> enumerate();
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Context& context();
  const Context& context() const;

  // Device-local storage buffer of `bytes` bytes (dedicated allocation for large ones).
  Result<Buffer> create_buffer(VkDeviceSize bytes) const;
  // Copy through a host-visible staging buffer; blocks until done.
  Result<void> upload(const Buffer& dst, const void* src, VkDeviceSize bytes, VkDeviceSize offset = 0) const;
  Result<void> download(const Buffer& src, void* dst, VkDeviceSize bytes, VkDeviceSize offset = 0) const;
  Result<void> fill(const Buffer& dst, uint32_t word, VkDeviceSize bytes = VK_WHOLE_SIZE, VkDeviceSize offset = 0) const;
  // Record into a fresh primary command buffer, submit to the context's queue and wait.
  Result<void> submit(const std::function<void(VkCommandBuffer)>& record) const;

  // Validation messages (warnings and errors) seen so far, and their text.
  uint64_t validation_message_count() const;
  std::vector<std::string> validation_messages() const;
  void clear_validation_messages() const;

  VkInstance instance() const;
  VkPhysicalDevice physical_device() const;
  VkDevice device() const;
  VkQueue queue() const;
  uint32_t queue_family_index() const;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr() const;

  struct Impl;

 private:
  friend class Buffer;
  explicit Device(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkprim
