#include "indirect.hpp"

#include <algorithm>

#include "context_impl.hpp"
#include "errors.hpp"
#include "shader_groups.hpp"

namespace vkprim::detail {

namespace {
constexpr KernelName kArgsKernel = kernel_name("indirect/args");
// Its push constants: four words, then kMaxIndirectEntries entries of four (shaders/indirect/args.comp).
static_assert(kArgsKernel.push_bytes() == 4 * 4 + kMaxIndirectEntries * 16);
}  // namespace

Result<const Kernel*> indirect_args_kernel(ContextImpl& c, const char* plan) {
  KernelDesc kd{kArgsKernel};
  kd.plan = plan;
  kd.group = &kShaderGroup_indirect;
  kd.variant = "default";
  kd.workgroup_size = 1;
  return get_kernel(c, kd);
}

Result<void> check_count_buffer(const BufferRange& count, const char* plan) {
  if (!count.buffer) return make_error(Status::invalid_argument, plan, ": count buffer is VK_NULL_HANDLE");
  if (count.offset % 4)
    return make_error(Status::invalid_argument, plan, ": count buffer offset ", count.offset,
                      " is not a multiple of 4 (the count is a u32)");
  if (const std::string why = range_size_problem(count.size, 4); !why.empty())
    return make_error(Status::invalid_argument, plan, ": count buffer ", why, " (the count is a u32)");
  return {};
}

Result<void> check_indirect_limits(const ContextImpl& c, uint64_t max_count, uint64_t window, uint64_t max_groups,
                                   const char* plan) {
  if (max_count > window)
    return make_error(Status::unsupported, plan, "::record_indirect: max_count ", max_count,
                      " exceeds one storage-buffer window (", window,
                      " elements, from maxStorageBufferRange); use record() with a CPU count");
  if (max_count > 0xffffffffull)
    return make_error(Status::unsupported, plan, "::record_indirect: max_count ", max_count,
                      " exceeds 2^32-1 (the GPU count is a u32)");
  const uint64_t x = c.caps.max_workgroup_count[0];
  if ((max_groups + x - 1) / x > c.caps.max_workgroup_count[1])
    return make_error(Status::unsupported, plan, "::record_indirect: ", max_groups,
                      " workgroups exceed the device's x*y dispatch limits");
  return {};
}

Pass make_indirect_args_pass(ContextImpl& c, const Kernel* args_kernel, const BufferRange& count,
                             const BoundBuffer& region, uint64_t max_count, const std::vector<IndirectEntry>& entries) {
  const auto bound = bind_elements(c, count, 0, 1, 4);
  Pass pass;
  pass.kernel = args_kernel;
  pass.buffers[0] = bound.bound;
  pass.buffers[1] = region;
  std::array<uint32_t, kArgsKernel.push_bytes() / 4> push{};
  push[0] = bound.shift;
  push[1] = uint32_t(std::min<uint64_t>(max_count, 0xffffffffull));
  push[2] = c.caps.max_workgroup_count[0];
  push[3] = uint32_t(entries.size());
  for (size_t k = 0; k < entries.size() && k < kMaxIndirectEntries; ++k) {
    push[4 + 4 * k + 0] = entries[k].per_group;
    push[4 + 4 * k + 1] = entries[k].min_groups;
    push[4 + 4 * k + 2] = entries[k].max_groups;
    push[4 + 4 * k + 3] = entries[k].source;
  }
  std::copy(push.begin(), push.end(), pass.push.begin());
  pass.groups = 1;
  pass.writes_indirect_args = true;
  pass.label = "vkprim indirect args";
  return pass;
}

}  // namespace vkprim::detail
