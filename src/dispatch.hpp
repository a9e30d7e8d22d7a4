// Dispatch geometry, storage-range windows and the recording of a plan's passes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "descriptors.hpp"
#include "kernel.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim::detail {

struct ContextImpl;

// Workgroup counts above maxComputeWorkGroupCount[0] spill into y and z; the shader linearizes
// x + nx * (y + ny * z) and skips indices >= the group count it is told.
struct DispatchSize { uint32_t x = 1, y = 1, z = 1; };
Result<DispatchSize> split_groups(const ContextImpl& context, uint64_t groups);

// The binding alignment vkprim uses: the device's storage offset alignment, at least 16 bytes so the
// element shift inside a binding decides whether 16-byte vector loads are aligned.
VkDeviceSize binding_alignment(const ContextImpl& context);

// `count` elements of `elem_size` bytes starting at element `first` of `range`, bound at an aligned
// offset; `shift` is the index of the first element within the binding.
struct ElementBinding {
  BoundBuffer bound;
  uint32_t shift = 0;
};
ElementBinding bind_elements(const ContextImpl& context, const BufferRange& range, uint64_t first, uint64_t count,
                             uint32_t elem_size);

// Largest number of elements one binding may cover (maxStorageBufferRange less the alignment slack),
// rounded down to a multiple of `granule`.
uint64_t window_elements(const ContextImpl& context, uint32_t elem_size, uint64_t granule);

// Bytes per entry of a record_indirect arguments region (src/indirect.hpp, shaders/common/indirect.glsl): a
// pass dispatched from entry k reads its vkCmdDispatchIndirect arguments at k times this.
constexpr VkDeviceSize kIndirectEntryBytes = 32;

struct Pass {
  const Kernel* kernel = nullptr;
  std::array<BoundBuffer, kMaxBindings> buffers{};
  std::array<uint32_t, 32> push{};   // the kernel's first push_bytes bytes are pushed
  uint64_t groups = 1;
  // record_indirect: dispatched with vkCmdDispatchIndirect from entry `indirect_entry` of the args region
  // (src/indirect.hpp) instead of `groups`.
  int32_t indirect_entry = -1;
  BoundBuffer indirect_region{};
  bool writes_indirect_args = false;   // the args pass: the barrier after it covers indirect-command reads
  std::string label;
  bool fill_before = false;       // vkCmdFillBuffer(fill) then a transfer->compute barrier
  BoundBuffer fill{};
  uint32_t fill_word = 0;
};

// Records the passes in order with a compute->compute barrier between consecutive ones. All descriptor
// sets are acquired and every dispatch size checked before the first command, so on error nothing
// is recorded.
// "<plan>::<call>: " ("Reduce::record: ") starts every error message; the strings are read only on error.
Result<void> record_passes(ContextImpl& context, DescriptorSets& descriptors, VkCommandBuffer cmd,
                           const std::vector<Pass>& passes, const char* plan, const char* call);

}  // namespace vkprim::detail
