#include "descriptors.hpp"

#include <algorithm>

#include "context_impl.hpp"
#include "errors.hpp"

namespace vkprim::detail {

DescriptorSets::~DescriptorSets() {
  for (VkDescriptorPool pool : pools_) context_->vk.vkDestroyDescriptorPool(context_->device, pool, nullptr);
}

void DescriptorSets::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < pools_.size() && i <= current_; ++i)
    context_->vk.vkResetDescriptorPool(context_->device, pools_[i], 0);
  current_ = 0;
  used_ = 0;
}

Result<VkDescriptorSet> DescriptorSets::allocate(VkDescriptorSetLayout layout) {
  const ContextImpl& c = *context_;
  const uint32_t per_pool = std::max(sets_per_pool_, 1u);
  if (!pools_.empty() && used_ == per_pool) {
    ++current_;
    used_ = 0;
  }
  if (current_ == pools_.size()) {
    // Every set has at most kMaxBindings storage-buffer descriptors, so a pool sized for that never runs
    // out of descriptors before it runs out of sets.
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, per_pool * kMaxBindings};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = per_pool;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkResult r = c.vk.vkCreateDescriptorPool(c.device, &info, nullptr, &pool);
    if (r != VK_SUCCESS) return vk_error(r, "vkCreateDescriptorPool");
    pools_.push_back(pool);
  }
  VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  info.descriptorPool = pools_[current_];
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkResult r = c.vk.vkAllocateDescriptorSets(c.device, &info, &set);
  if (r != VK_SUCCESS) return vk_error(r, "vkAllocateDescriptorSets");
  ++used_;
  return set;
}

Result<std::vector<VkDescriptorSet>> DescriptorSets::write(const std::vector<SetContents>& contents) {
  std::lock_guard<std::mutex> lock(mutex_);
  const ContextImpl& c = *context_;
  std::vector<VkDescriptorSet> sets;
  sets.reserve(contents.size());
  for (const SetContents& s : contents) {
    auto set = allocate(s.layout);
    if (!set) return std::move(set).error();
    std::array<VkDescriptorBufferInfo, kMaxBindings> infos{};
    std::array<VkWriteDescriptorSet, kMaxBindings> writes{};
    for (uint32_t b = 0; b < s.bindings; ++b) {
      infos[b] = {s.buffers[b].buffer, s.buffers[b].offset, s.buffers[b].range};
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = set.value();
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    c.vk.vkUpdateDescriptorSets(c.device, s.bindings, writes.data(), 0, nullptr);
    sets.push_back(set.value());
  }
  return sets;
}

}  // namespace vkprim::detail
