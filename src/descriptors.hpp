// Binding a pass's storage buffers without push descriptors: every record writes fresh descriptor sets,
// taken from pools the plan owns and adds as it needs them. Nothing is looked up by buffer handle, so a
// handle the driver reuses after vkDestroyBuffer can never meet a set written for the destroyed buffer,
// and a set recorded into a pending command buffer is never rewritten. The sets return to the pools only
// at release(), which the caller calls once the command buffers that used them have completed.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "vkprim/result.hpp"

namespace vkprim::detail {

struct ContextImpl;

constexpr uint32_t kMaxBindings = 8;

struct BoundBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
};

// What one set holds: its layout and the ranges of its first `bindings` bindings.
struct SetContents {
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  std::array<BoundBuffer, kMaxBindings> buffers{};
};

class DescriptorSets {
 public:
  DescriptorSets(ContextImpl& context, uint32_t sets_per_pool) : context_(&context), sets_per_pool_(sets_per_pool) {}
  ~DescriptorSets();
  DescriptorSets(const DescriptorSets&) = delete;
  DescriptorSets& operator=(const DescriptorSets&) = delete;

  // One newly allocated and written set per entry, in order. Fails only where the driver refuses a pool
  // (out of memory); sets allocated before such a failure return at the next release().
  Result<std::vector<VkDescriptorSet>> write(const std::vector<SetContents>& contents);
  void release();

 private:
  Result<VkDescriptorSet> allocate(VkDescriptorSetLayout layout);

  ContextImpl* context_;
  uint32_t sets_per_pool_;
  std::mutex mutex_;
  std::vector<VkDescriptorPool> pools_;  // pools_[0..current_] hold this epoch's sets
  size_t current_ = 0;
  uint32_t used_ = 0;                    // sets taken from pools_[current_]
};

}  // namespace vkprim::detail
