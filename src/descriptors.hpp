// Binding a pass's storage buffers: push descriptors where available, otherwise descriptor sets from a
// bounded pool owned by the plan. Sets are cached by their contents (layout + buffer ranges) and never
// rewritten, so a set recorded into a pending command buffer is never changed under it; when the cache
// is full record() fails with out_of_memory before recording anything, until release() is called.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "vkprim/result.hpp"

namespace vkprim::detail {

struct ContextImpl;
struct Kernel;

constexpr uint32_t kMaxBindings = 8;

struct BoundBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
  auto tie() const { return std::tie(buffer, offset, range); }
  bool operator<(const BoundBuffer& o) const { return tie() < o.tie(); }
};

struct DescriptorKey {
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  std::array<BoundBuffer, kMaxBindings> buffers{};
  bool operator<(const DescriptorKey& o) const {
    return std::tie(layout, bindings, buffers) < std::tie(o.layout, o.bindings, o.buffers);
  }
};

class DescriptorCache {
 public:
  DescriptorCache(ContextImpl& context, uint32_t capacity) : context_(&context), capacity_(capacity) {}
  ~DescriptorCache();
  DescriptorCache(const DescriptorCache&) = delete;
  DescriptorCache& operator=(const DescriptorCache&) = delete;

  // Returns one set per key (in order), allocating and writing the missing ones; all or nothing.
  Result<std::vector<VkDescriptorSet>> acquire(const std::vector<DescriptorKey>& keys);
  void release();

 private:
  ContextImpl* context_;
  uint32_t capacity_;
  std::mutex mutex_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::map<DescriptorKey, VkDescriptorSet> sets_;
};

}  // namespace vkprim::detail
