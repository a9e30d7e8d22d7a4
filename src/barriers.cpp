#include "barriers.hpp"

#include "context_impl.hpp"

namespace vkprim::detail {

namespace {

void global_barrier(const ContextImpl& c, VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage,
                    VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access) {
  if (c.sync2) {
    VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    barrier.srcStageMask = src_stage;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stage;
    barrier.dstAccessMask = dst_access;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &barrier;
    c.vk.vkCmdPipelineBarrier2(cmd, &dependency);
    return;
  }
  // The legacy flags have the same values as the low bits of the *2 flags used here.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = static_cast<VkAccessFlags>(src_access);
  barrier.dstAccessMask = static_cast<VkAccessFlags>(dst_access);
  c.vk.vkCmdPipelineBarrier(cmd, static_cast<VkPipelineStageFlags>(src_stage),
                            static_cast<VkPipelineStageFlags>(dst_stage), 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace

void compute_to_compute_barrier(const ContextImpl& c, VkCommandBuffer cmd) {
  global_barrier(c, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
}

void compute_to_fill_barrier(const ContextImpl& c, VkCommandBuffer cmd) {
  global_barrier(c, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT,
                 VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

void compute_to_indirect_barrier(const ContextImpl& c, VkCommandBuffer cmd) {
  global_barrier(c, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                 VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
}

void transfer_to_compute_barrier(const ContextImpl& c, VkCommandBuffer cmd) {
  global_barrier(c, cmd, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
}

}  // namespace vkprim::detail
