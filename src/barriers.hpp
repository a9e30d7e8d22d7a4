// The one barrier helper: a global memory barrier, through synchronization2 where enabled.
#pragma once

#include <vulkan/vulkan_core.h>

namespace vkprim::detail {

struct ContextImpl;

// Compute-shader writes -> compute-shader reads and writes (between two of vkprim's own passes).
void compute_to_compute_barrier(const ContextImpl& context, VkCommandBuffer cmd);
// Compute-shader reads and writes -> transfer writes and compute-shader reads and writes: before a pass
// that first clears scratch with vkCmdFillBuffer (the chained scans' tile state).
void compute_to_fill_barrier(const ContextImpl& context, VkCommandBuffer cmd);
// Compute-shader writes -> indirect-command reads and compute-shader reads and writes: after the pass
// that computes record_indirect's dispatch arguments.
void compute_to_indirect_barrier(const ContextImpl& context, VkCommandBuffer cmd);
// Transfer writes (vkCmdFillBuffer of scratch) -> compute-shader reads and writes.
void transfer_to_compute_barrier(const ContextImpl& context, VkCommandBuffer cmd);

}  // namespace vkprim::detail
