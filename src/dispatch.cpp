#include "dispatch.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>

#include "barriers.hpp"
#include "context_impl.hpp"
#include "errors.hpp"

namespace vkprim::detail {

Result<DispatchSize> split_groups(const ContextImpl& c, uint64_t groups) {
  const auto& max = c.caps.max_workgroup_count;
  DispatchSize d;
  if (groups == 0) groups = 1;
  if (groups <= max[0]) {
    d.x = static_cast<uint32_t>(groups);
    return d;
  }
  d.x = max[0];
  const uint64_t rows = (groups + d.x - 1) / d.x;
  if (rows <= max[1]) {
    d.y = static_cast<uint32_t>(rows);
    return d;
  }
  d.y = max[1];
  const uint64_t slices = (rows + d.y - 1) / d.y;
  if (slices > max[2])
    return make_error(Status::invalid_argument, groups, " workgroups exceed the device's dispatch limits");
  d.z = static_cast<uint32_t>(slices);
  return d;
}

VkDeviceSize binding_alignment(const ContextImpl& c) {
  return std::max<VkDeviceSize>(16, c.caps.min_storage_buffer_offset_alignment);
}

ElementBinding bind_elements(const ContextImpl& c, const BufferRange& range, uint64_t first, uint64_t count,
                             uint32_t elem_size) {
  const VkDeviceSize align = binding_alignment(c);
  const VkDeviceSize start = range.offset + first * elem_size;
  ElementBinding b;
  b.bound.buffer = range.buffer;
  // The aligned offset at most `start` that lies a whole number of elements before it. For sizes that
  // divide the alignment that is start rounded down; a user operator's element (12, 24, 48 bytes) may
  // need up to alignment / gcd elements before start.
  VkDeviceSize back = start % align;
  if (back % elem_size != 0) {
    const VkDeviceSize period = align / std::gcd<VkDeviceSize>(align, elem_size);
    for (VkDeviceSize k = 0; k < period && k * elem_size <= start; ++k)
      if ((start - k * elem_size) % align == 0) {
        back = k * elem_size;
        break;
      }
  }
  b.bound.offset = start - back;
  b.shift = static_cast<uint32_t>((start - b.bound.offset) / elem_size);
  // A zero-length range is not a valid descriptor: bind at least one element (never read).
  b.bound.range = (start - b.bound.offset) + std::max<uint64_t>(count, 1) * elem_size;
  return b;
}

uint64_t window_elements(const ContextImpl& c, uint32_t elem_size, uint64_t granule) {
  const uint64_t usable = (c.caps.max_storage_buffer_range - binding_alignment(c)) / elem_size;
  // Shader indices are 32-bit: keep a window's element count below 2^31 too.
  const uint64_t capped = std::min<uint64_t>(usable, uint64_t(1) << 31);
  return std::max<uint64_t>(capped / granule * granule, granule);
}

namespace {

// Every listed kernel's push constants fit a pass, and its bindings a descriptor set.
static_assert(std::all_of(std::begin(kKernelList), std::end(kKernelList), [](const KernelInfo& k) {
  return k.push_bytes <= sizeof(Pass::push) && k.bindings <= kMaxBindings;
}));

// Every pass's dispatch size, checked in pass order before anything is recorded.
Result<std::vector<DispatchSize>> check_passes(const ContextImpl& c, const std::vector<Pass>& passes, const char* plan,
                                               const char* call) {
  std::vector<DispatchSize> sizes;
  sizes.reserve(passes.size());
  for (const Pass& p : passes) {
    auto size = split_groups(c, p.indirect_entry >= 0 ? 1 : p.groups);
    if (!size) return make_error(size.status(), plan, "::", call, ": ", size.error().message);
    sizes.push_back(size.value());
  }
  return sizes;
}

// One written descriptor set per pass where push descriptors are not in use; none where they are.
Result<std::vector<VkDescriptorSet>> write_sets(ContextImpl& c, DescriptorSets& descriptors,
                                                const std::vector<Pass>& passes, const char* plan, const char* call) {
  if (c.use_push_descriptors()) return std::vector<VkDescriptorSet>{};
  std::vector<SetContents> contents;
  for (const Pass& p : passes) {
    SetContents s;
    s.layout = p.kernel->set_layout;
    s.bindings = p.kernel->desc.kernel.bindings();
    for (uint32_t b = 0; b < s.bindings; ++b) s.buffers[b] = p.buffers[b];
    contents.push_back(s);
  }
  auto written = descriptors.write(contents);
  if (!written) return make_error(written.status(), plan, "::", call, ": ", written.error().message);
  return std::move(written).value();
}

void push_buffers(ContextImpl& c, VkCommandBuffer cmd, const Pass& p) {
  const Kernel& k = *p.kernel;
  const uint32_t bindings = k.desc.kernel.bindings();
  std::array<VkDescriptorBufferInfo, kMaxBindings> infos{};
  std::array<VkWriteDescriptorSet, kMaxBindings> writes{};
  for (uint32_t b = 0; b < bindings; ++b) {
    infos[b] = {p.buffers[b].buffer, p.buffers[b].offset, p.buffers[b].range};
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  c.vk.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, bindings, writes.data());
}

// The pass's commands between its labels: the fill, the pipeline, its buffers (pushed, or sets[i]), its
// push constants and the dispatch.
void record_pass(ContextImpl& c, VkCommandBuffer cmd, const Pass& p, const DispatchSize& size,
                 const std::vector<VkDescriptorSet>& sets, size_t i) {
  const Kernel& k = *p.kernel;
  if (p.fill_before) {
    c.vk.vkCmdFillBuffer(cmd, p.fill.buffer, p.fill.offset, p.fill.range, p.fill_word);
    transfer_to_compute_barrier(c, cmd);
  }
  c.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
  if (c.use_push_descriptors())
    push_buffers(c, cmd, p);
  else
    c.vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &sets[i], 0, nullptr);
  if (k.desc.kernel.push_bytes())
    c.vk.vkCmdPushConstants(cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k.desc.kernel.push_bytes(), p.push.data());
  if (p.indirect_entry >= 0)
    c.vk.vkCmdDispatchIndirect(cmd, p.indirect_region.buffer,
                               p.indirect_region.offset + VkDeviceSize(p.indirect_entry) * kIndirectEntryBytes);
  else
    c.vk.vkCmdDispatch(cmd, size.x, size.y, size.z);
}

// The barrier between pass p and the next one.
void barrier_between(ContextImpl& c, VkCommandBuffer cmd, const Pass& p, const Pass& next) {
  // After the args pass both barriers may be needed: its arguments feed indirect dispatches, and the
  // next pass may clear scratch first.
  if (p.writes_indirect_args) compute_to_indirect_barrier(c, cmd);
  if (next.fill_before) compute_to_fill_barrier(c, cmd);
  else if (!p.writes_indirect_args) compute_to_compute_barrier(c, cmd);
}

// A timestamp after the work recorded so far, while the pass timer has queries left.
void stamp(ContextImpl& c, PassTimer* timer, VkCommandBuffer cmd, const std::string& label) {
  if (!timer || timer->used >= timer->capacity) return;
  c.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timer->pool, timer->used++);
  timer->labels.push_back(label);
}

}  // namespace

Result<void> record_passes(ContextImpl& c, DescriptorSets& descriptors, VkCommandBuffer cmd,
                           const std::vector<Pass>& passes, const char* plan, const char* call) {
  if (!cmd) return make_error(Status::invalid_argument, plan, "::", call, ": command buffer is VK_NULL_HANDLE");
  auto sizes = check_passes(c, passes, plan, call);
  if (!sizes) return std::move(sizes).error();
  auto sets = write_sets(c, descriptors, passes, plan, call);
  if (!sets) return std::move(sets).error();

  PassTimer* timer = c.pass_timer;
  if (!passes.empty()) stamp(c, timer, cmd, "start");
  for (size_t i = 0; i < passes.size(); ++i) {
    const Pass& p = passes[i];
    if (c.debug_labels) {
      VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
      label.pLabelName = p.label.c_str();
      c.vki.vkCmdBeginDebugUtilsLabelEXT(cmd, &label);
    }
    record_pass(c, cmd, p, sizes.value()[i], sets.value(), i);
    stamp(c, timer, cmd, p.label);
    if (c.debug_labels) c.vki.vkCmdEndDebugUtilsLabelEXT(cmd);
    if (i + 1 < passes.size()) barrier_between(c, cmd, p, passes[i + 1]);
  }
  return {};
}

}  // namespace vkprim::detail
