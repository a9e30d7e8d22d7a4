#include "descriptors.hpp"

#include <set>

#include "context_impl.hpp"
#include "errors.hpp"

namespace vkprim::detail {

DescriptorCache::~DescriptorCache() {
  if (pool_) context_->vk.vkDestroyDescriptorPool(context_->device, pool_, nullptr);
}

void DescriptorCache::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pool_) context_->vk.vkResetDescriptorPool(context_->device, pool_, 0);
  sets_.clear();
}

Result<std::vector<VkDescriptorSet>> DescriptorCache::acquire(const std::vector<DescriptorKey>& keys) {
  std::lock_guard<std::mutex> lock(mutex_);
  const ContextImpl& c = *context_;
  std::set<DescriptorKey> missing;
  for (const auto& key : keys)
    if (!sets_.count(key)) missing.insert(key);
  if (sets_.size() + missing.size() > capacity_)
    return make_error(Status::out_of_memory, "descriptor cache of this plan is full (", sets_.size(), " of ", capacity_,
                      " sets, ", missing.size(), " more needed); call release_descriptor_sets() once the command "
                      "buffers that used this plan have completed, or raise ContextOptions::descriptor_cache_size");
  if (!pool_ && !missing.empty()) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, capacity_ * kMaxBindings};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = capacity_;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkResult r = c.vk.vkCreateDescriptorPool(c.device, &info, nullptr, &pool_);
    if (r != VK_SUCCESS) return vk_error(r, "vkCreateDescriptorPool");
  }
  for (const auto& key : missing) {
    VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    info.descriptorPool = pool_;
    info.descriptorSetCount = 1;
    info.pSetLayouts = &key.layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkResult r = c.vk.vkAllocateDescriptorSets(c.device, &info, &set);
    if (r != VK_SUCCESS) return vk_error(r, "vkAllocateDescriptorSets");
    std::array<VkDescriptorBufferInfo, kMaxBindings> infos{};
    std::array<VkWriteDescriptorSet, kMaxBindings> writes{};
    for (uint32_t b = 0; b < key.bindings; ++b) {
      infos[b] = {key.buffers[b].buffer, key.buffers[b].offset, key.buffers[b].range};
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = set;
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    c.vk.vkUpdateDescriptorSets(c.device, key.bindings, writes.data(), 0, nullptr);
    sets_.emplace(key, set);
  }
  std::vector<VkDescriptorSet> result;
  result.reserve(keys.size());
  for (const auto& key : keys) result.push_back(sets_.at(key));
  return result;
}

}  // namespace vkprim::detail
