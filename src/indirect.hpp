// GPU-driven counts for record_indirect: one small pass (shaders/indirect/args.comp) reads the caller's
// u32 element count, clamps it to the plan's max_count and writes each entry's element count, workgroup
// count and vkCmdDispatchIndirect arguments into a region of the plan's scratch
// (layout: shaders/common/indirect.glsl). Passes recorded with `indirect_entry = k` are dispatched from
// entry k; their kernels read n_k and g_k from the region bound at VKPRIM_INDIRECT_BINDING.
#pragma once

#include <cstdint>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "dispatch.hpp"
#include "kernel.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim::detail {

struct ContextImpl;

constexpr uint32_t kMaxIndirectEntries = 6;
constexpr VkDeviceSize kIndirectRegionBytes = kMaxIndirectEntries * kIndirectEntryBytes;

// How entry k's workgroup count follows from the count: n_k = the clamped count (source 0) or the
// workgroups of entry source-1; g_k = clamp(ceil(n_k / per_group), min_groups, max_groups), with
// per_group 0 meaning g_k = max_groups and max_groups 0 meaning no upper bound.
struct IndirectEntry {
  uint32_t per_group = 0;
  uint32_t min_groups = 0;
  uint32_t max_groups = 0;
  uint32_t source = 0;
};

// The args kernel; plans fetch it at create so record_indirect builds no pipeline.
Result<const Kernel*> indirect_args_kernel(ContextImpl& context, const char* plan);

// Checks the caller's count range (a u32 at a 4-byte aligned offset) for `plan`'s error messages.
Result<void> check_count_buffer(const BufferRange& count, const char* plan);

// record_indirect covers one storage-range window: refuses plans whose max_count needs more, or whose
// largest dispatch cannot be spilled into y alone.
Result<void> check_indirect_limits(const ContextImpl& context, uint64_t max_count, uint64_t window,
                                   uint64_t max_groups, const char* plan);

// The pass that fills `region` (kIndirectRegionBytes of scratch at a binding-aligned offset) from `count`.
Pass make_indirect_args_pass(ContextImpl& context, const Kernel* args_kernel, const BufferRange& count,
                             const BoundBuffer& region, uint64_t max_count, const std::vector<IndirectEntry>& entries);

}  // namespace vkprim::detail
