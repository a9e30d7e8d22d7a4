// SegmentedReduce: one reduction per segment of the input, the strategy chosen per segment on the GPU by its
// length, after CSR-adaptive SpMV (Greathouse & Daga, "Efficient Sparse Matrix-Vector Multiplication on GPUs
// using the CSR Storage Format", SC 2014): short segments one invocation each, medium ones one subgroup each,
// huge ones in chunks of one workgroup each (shaders/segmented_reduce, docs/ALGORITHMS.md).
#include "vkprim/segmented_reduce.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "indirect.hpp"
#include "plan_common.hpp"
#include "shader_groups.hpp"

namespace vkprim {
namespace detail {
namespace {

constexpr KernelName kSegmentsKernel = kernel_name("segmented_reduce/segments");
constexpr KernelName kRangesKernel = kernel_name("segmented_reduce/ranges");

// The push constants of both kernels (common/segment_io.glsl, SegmentConstants), word for word.
struct SegmentPush {
  uint32_t segments, segment_size, bound, in_offset, out_offset, begin_offset, end_offset, partial_offset;
  uint32_t flags, group_count, entry, short_max, medium_max, chunk, medium_list, huge_list, owners, max_huge;
  uint32_t max_chunks;
};
static_assert(sizeof(SegmentPush) == kSegmentsKernel.push_bytes() && sizeof(SegmentPush) == kRangesKernel.push_bytes());

// Flags and scratch layout of common/segment_io.glsl: header words, then the lists at word offsets.
enum : uint32_t { kFixed = 1u, kIndirect = 2u, kLists = 4u, kCombine = 8u };
constexpr uint32_t kHeaderWords = 16;
constexpr uint32_t kHugeEntryWords = 3;

// Thresholds and shapes per device class: the first row whose driver matches (0 = any) applies. Lengths
// are in bytes of elements (a 64-byte user value reaches each threshold at 1/16 the elements of a u32), at
// least one element each. A workgroup is workgroup_size lanes loading `vectors` 16-byte vectors per step.
struct SegmentPolicy {
  VkDriverId driver;
  uint32_t workgroup_size, vectors;
  uint32_t short_bytes;   // a segment up to this: one invocation, in order, in the first pass
  uint32_t medium_bytes;  // up to this: one subgroup (emulation: one workgroup), in the ranges pass
  uint32_t chunk_bytes;   // longer: chunks of this, one workgroup each, then one workgroup combines them
};
constexpr SegmentPolicy kSegmentPolicy[] = {
    // llvmpipe: thresholds small enough that the tests reach the huge path at a few thousand elements, and
    // one invocation's loops stay far below llvmpipe's 65535-iteration budget (docs/ALGORITHMS.md).
    {VK_DRIVER_ID_MESA_LLVMPIPE, 256, 4, 64, 16384, 4096},
    // GPUs, not yet measured (docs/PERFORMANCE.md): 32 u32 per invocation (a warp reads its 32 segments'
    // 128-byte lines whole), a subgroup up to 16K u32, chunks of 8K u32 (a workgroup's 2 x 4 vectors per lane).
    {VkDriverId(0), 256, 4, 128, 65536, 32768},
};

}  // namespace

struct SegmentedReducePlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  SegmentedReduceDesc desc;
  SegmentThresholds thresholds{};  // in elements
  uint32_t elem = 4;
  uint32_t workgroup_size = 256, items = 4;
  uint32_t team_lanes = 1;         // lanes that share a medium segment: the subgroup, or the workgroup
  uint64_t window = 0;             // elements of one binding
  uint64_t ranges_groups = 1;      // the grid of the ranges pass
  uint64_t max_huge = 0, max_chunks = 0;
  const Kernel* segments_kernel = nullptr;
  const Kernel* ranges_kernel = nullptr;
  const Kernel* args_kernel = nullptr;
  // Scratch: words (header, medium list, huge list, chunk owners), partials, the record_indirect region.
  uint32_t medium_list = 0, huge_list = 0, owners = 0;  // word offsets
  VkDeviceSize scratch_align = 16, words_bytes = 0, partials_offset = 0, partials_bytes = 0;
  VkDeviceSize indirect_offset = 0;
  std::unique_ptr<DescriptorSets> descriptors;
};

namespace {

// Every check of the description, before any choice: the operator or the type and op, the counts, the
// overrides.
Result<void> check_segmented_desc(const ContextImpl& c, const SegmentedReduceDesc& desc) {
  constexpr const char* plan = "SegmentedReduce::create";
  if (const UserOperator* user = desc.user_operator) {
    if (auto ok = check_user_operator(*user, plan); !ok) return ok.error();
  } else if (auto ok = check_type_op(c, desc.type, desc.op, plan); !ok) {
    return ok.error();
  }
  if (desc.max_segments == 0)
    return make_error(Status::invalid_argument, plan, ": max_segments 0; a plan reduces at least one segment");
  if (desc.max_count == 0)
    return make_error(Status::invalid_argument, plan, ": max_count 0; the offsets address at least one element");
  if (auto ok = check_tuning(plan, desc.tuning, tune_workgroup_size | tune_vectors_per_thread | tune_max_workgroups);
      !ok)
    return ok.error();
  const uint32_t wg = desc.tuning.workgroup_size;
  if (wg && (wg < 64 || wg > 1024 || (wg & (wg - 1)) || wg % c.caps.max_subgroup_size))
    return make_error(Status::invalid_argument, plan, ": tuning.workgroup_size ", wg, " must be a power of two from ",
                      "64 to 1024 and a multiple of the device's largest subgroup (", c.caps.max_subgroup_size, ")");
  if (desc.tuning.vectors_per_thread > 16)
    return make_error(Status::invalid_argument, plan, ": tuning.vectors_per_thread ", desc.tuning.vectors_per_thread,
                      " exceeds 16");
  const SegmentThresholds& t = desc.thresholds;
  if (t.medium_max && t.medium_max < t.short_max)
    return make_error(Status::invalid_argument, plan, ": thresholds.medium_max ", t.medium_max,
                      " is below thresholds.short_max ", t.short_max);
  return {};
}

// The policy's thresholds in elements of the plan's size, with the description's overrides.
SegmentThresholds resolve_thresholds(const SegmentPolicy& policy, const SegmentedReduceDesc& desc, uint32_t elem) {
  SegmentThresholds t{std::max(1u, policy.short_bytes / elem), std::max(1u, policy.medium_bytes / elem),
                      std::max(1u, policy.chunk_bytes / elem)};
  if (desc.thresholds.short_max) t.short_max = desc.thresholds.short_max;
  if (desc.thresholds.medium_max) t.medium_max = desc.thresholds.medium_max;
  if (desc.thresholds.chunk) t.chunk = desc.thresholds.chunk;
  t.medium_max = std::max(t.medium_max, t.short_max);
  return t;
}

// The two kernels: the first pass needs no subgroup operation (its variant is the type's, or the user
// operator's emulation); the ranges pass's teams are subgroups where full subgroups can be required.
Result<void> build_segmented_kernels(ContextImpl& c, const SegmentedReduceDesc& desc, SegmentedReducePlan& p) {
  const UserOperator* user = desc.user_operator;
  for (const bool ranges : {false, true}) {
    KernelDesc kd{ranges ? kRangesKernel : kSegmentsKernel};
    kd.plan = "SegmentedReduce::create";
    kd.group = user ? user->kernels : &kShaderGroup_segmented_reduce;
    if (!user) kd.op = desc.op;
    kd.workgroup_size = p.workgroup_size;
    kd.items = p.items;
    auto variant = value_variant(c, desc.type, desc.op, user, ranges, p.workgroup_size);
    if (!variant) return std::move(variant).error();
    kd.variant = variant.value();
    kd.uses_subgroups = ranges && kd.variant.find(".nosg") == std::string::npos;
    if (ranges) p.team_lanes = kd.uses_subgroups ? c.full_subgroup_size(p.workgroup_size) : p.workgroup_size;
    auto kernel = get_kernel(c, kd);
    if (!kernel) return std::move(kernel).error();
    (ranges ? p.ranges_kernel : p.segments_kernel) = kernel.value();
  }
  auto args = indirect_args_kernel(c, "SegmentedReduce::create");
  if (!args) return std::move(args).error();
  p.args_kernel = args.value();
  return {};
}

// The grid of the ranges pass: one wave of resident workgroups where the driver reports its compute units
// (each loops over its share of the medium segments and chunks), 2048 otherwise; never more than there can
// be work for. CPU drivers: one workgroup per 1024 segments and chunks the plan may hold, 64 to 4096, so
// that on llvmpipe no workgroup's loops come near its 65535 iterations (docs/ALGORITHMS.md, "Loop budget").
uint64_t ranges_grid(const ContextImpl& c, const SegmentedReduceDesc& desc, const SegmentedReducePlan& p) {
  uint64_t grid = 2048;
  if (c.caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU)
    grid = std::clamp<uint64_t>((desc.max_segments + p.max_chunks + 1023) / 1024, 64, 4096);
  else if (c.caps.compute_units && c.caps.threads_per_compute_unit >= p.workgroup_size)
    grid = uint64_t(c.caps.compute_units) * (c.caps.threads_per_compute_unit / p.workgroup_size);
  if (desc.tuning.max_workgroups) grid = desc.tuning.max_workgroups;
  return std::max<uint64_t>(1, std::min(grid, desc.max_segments + p.max_chunks));
}

// Scratch: the word region (header, the medium list of max_segments entries, the huge list, the chunk
// owners), the partials and record_indirect's region. Without overlapping segments at most max_count /
// (medium_max + 1) are huge and their chunks number at most max_count / chunk + that, so this holds every
// record whose huge segments do not overlap; the first pass sends the others to the medium list.
Result<void> lay_out_segmented_scratch(const ContextImpl& c, const SegmentedReduceDesc& desc, SegmentedReducePlan& p) {
  p.max_huge = std::min(desc.max_segments, desc.max_count / (uint64_t(p.thresholds.medium_max) + 1));
  p.max_chunks = desc.max_count / p.thresholds.chunk + p.max_huge + 1;
  const uint64_t words = kHeaderWords + desc.max_segments + kHugeEntryWords * p.max_huge + p.max_chunks;
  p.scratch_align = binding_alignment(c);
  const VkDeviceSize granule = region_granule(p.scratch_align, p.elem);
  p.words_bytes = align_up(words * 4, p.scratch_align);
  p.partials_offset = align_up(p.words_bytes, granule);
  p.partials_bytes = align_up(p.max_chunks * p.elem, p.scratch_align);
  p.indirect_offset = align_up(p.partials_offset + p.partials_bytes, p.scratch_align);
  const VkDeviceSize range = c.caps.max_storage_buffer_range - p.scratch_align;
  if (p.words_bytes > range || p.partials_bytes > range || words > 0xffffffffull)
    return make_error(Status::unsupported, "SegmentedReduce::create: max_segments ", desc.max_segments,
                      " and max_count ", desc.max_count, " need ", words * 4, " bytes of segment lists and ",
                      p.partials_bytes, " of partials; one storage-buffer binding holds ", range);
  p.medium_list = kHeaderWords;
  p.huge_list = uint32_t(p.medium_list + desc.max_segments);
  p.owners = uint32_t(p.huge_list + kHugeEntryWords * p.max_huge);
  return {};
}

// The input and the outputs fit one binding each (window_elements keeps indices below 2^31).
Result<void> check_segmented_limits(const SegmentedReduceDesc& desc, const SegmentedReducePlan& p) {
  if (desc.max_count > p.window)
    return make_error(Status::unsupported, "SegmentedReduce::create: max_count ", desc.max_count,
                      " exceeds one storage-buffer binding (", p.window, " elements, from maxStorageBufferRange)");
  if (desc.max_segments > p.window)  // outputs of p.elem >= 4 bytes: the offsets fit where they do
    return make_error(Status::unsupported, "SegmentedReduce::create: max_segments ", desc.max_segments,
                      " exceeds one storage-buffer binding of outputs (", p.window, ")");
  return {};
}

}  // namespace
}  // namespace detail

using detail::make_error;

SegmentedReduce::SegmentedReduce(std::unique_ptr<detail::SegmentedReducePlan> plan) : plan_(std::move(plan)) {}
SegmentedReduce::SegmentedReduce(SegmentedReduce&&) noexcept = default;
SegmentedReduce& SegmentedReduce::operator=(SegmentedReduce&&) noexcept = default;
SegmentedReduce::~SegmentedReduce() = default;

const SegmentedReduceDesc& SegmentedReduce::desc() const { return plan_->desc; }
SegmentThresholds SegmentedReduce::thresholds() const { return plan_->thresholds; }
uint32_t SegmentedReduce::medium_lanes() const { return plan_->team_lanes; }
void SegmentedReduce::release_descriptor_sets() const { plan_->descriptors->release(); }

ScratchRequirements SegmentedReduce::scratch_requirements() const {
  const auto& p = *plan_;
  return {p.indirect_offset + detail::kIndirectRegionBytes, p.scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}

uint64_t SegmentedReduce::sequential_run(uint64_t length) const {
  const auto& p = *plan_;
  const SegmentThresholds& t = p.thresholds;
  // A lane's share of a range split `lanes` ways, with its head and tail elements.
  auto share = [](uint64_t n, uint64_t lanes) { return (n + lanes - 1) / lanes + 2; };
  if (length <= t.short_max) return std::max<uint64_t>(1, length);
  if (length <= t.medium_max) return share(length, p.team_lanes);
  return share(t.chunk, p.workgroup_size) + share((length + t.chunk - 1) / t.chunk, p.workgroup_size);
}

Result<SegmentedReduce> SegmentedReduce::create(Context& context, const SegmentedReduceDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_segmented_desc(c, desc); !ok) return ok.error();
  const detail::SegmentPolicy& policy = detail::policy_row(detail::kSegmentPolicy, c.caps.driver_id);
  auto plan = std::make_unique<detail::SegmentedReducePlan>();
  auto& p = *plan;
  p.context = &c;
  p.desc = desc;
  p.elem = desc.user_operator ? desc.user_operator->size : size_of(desc.type);
  p.workgroup_size = desc.tuning.workgroup_size ? desc.tuning.workgroup_size : policy.workgroup_size;
  p.items = desc.tuning.vectors_per_thread ? desc.tuning.vectors_per_thread : policy.vectors;
  p.thresholds = detail::resolve_thresholds(policy, desc, p.elem);
  p.window = detail::window_elements(c, p.elem, 1);
  if (auto ok = detail::check_segmented_limits(desc, p); !ok) return ok.error();
  if (auto ok = detail::build_segmented_kernels(c, desc, p); !ok) return ok.error();
  if (auto ok = detail::lay_out_segmented_scratch(c, desc, p); !ok) return ok.error();
  p.ranges_groups = detail::ranges_grid(c, desc, p);
  p.descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return SegmentedReduce(std::move(plan));
}

namespace detail {
namespace {

// What a record binds: the caller's ranges as bindings with their element shifts, the scratch regions, and
// the bound every offset is clamped to.
struct SegmentBindings {
  ElementBinding input, output, begin, end, partials;
  BoundBuffer words{}, region{};
  uint32_t bound = 0;
};

// `segments` outputs and offsets (0: bound to a valid range that is never read, for record_fixed).
SegmentBindings bind_segmented(const ContextImpl& c, const SegmentedReducePlan& p, const BufferRange& input,
                               const BufferRange& output, const BufferRange* begin, const BufferRange* end,
                               uint64_t segments, const BufferRange& scratch) {
  SegmentBindings b;
  const uint64_t elements = std::min<uint64_t>(p.desc.max_count, input.size / p.elem);
  b.bound = uint32_t(elements);
  b.input = bind_elements(c, input, 0, elements, p.elem);
  b.output = bind_elements(c, output, 0, segments, p.elem);
  b.begin = begin ? bind_elements(c, *begin, 0, segments, 4) : b.input;
  b.end = end ? bind_elements(c, *end, 0, segments, 4) : b.input;
  b.words = {scratch.buffer, scratch.offset, p.words_bytes};
  b.partials = bind_elements(c, BufferRange{scratch.buffer, scratch.offset + p.partials_offset, p.partials_bytes}, 0,
                             p.max_chunks, p.elem);
  b.region = {scratch.buffer, scratch.offset + p.indirect_offset, kIndirectRegionBytes};
  return b;
}

SegmentPush base_push(const SegmentedReducePlan& p, const SegmentBindings& b, uint64_t segments, uint32_t flags) {
  const SegmentThresholds& t = p.thresholds;
  return {uint32_t(segments), 0, b.bound, b.input.shift, b.output.shift, b.begin.shift, b.end.shift,
          b.partials.shift, flags, 0, 0, t.short_max, t.medium_max, t.chunk, p.medium_list, p.huge_list,
          p.owners, uint32_t(p.max_huge), uint32_t(p.max_chunks)};
}

// A pass of `kernel` over the bindings with `push`, `groups` workgroups (its group count pushed too).
Pass segmented_pass(const Kernel* kernel, const SegmentBindings& b, SegmentPush push, uint64_t groups,
                    const std::string& label) {
  Pass pass;
  pass.kernel = kernel;
  pass.buffers = {b.input.bound, b.output.bound, b.begin.bound, b.end.bound, b.words, b.partials.bound, b.region};
  push.group_count = uint32_t(groups);
  static_assert(sizeof(push) <= sizeof(pass.push));
  std::copy_n(reinterpret_cast<const uint32_t*>(&push), sizeof(push) / 4, pass.push.begin());
  pass.groups = groups;
  pass.label = "vkprim segmented_reduce " + label;
  return pass;
}

// The passes after the first: the ranges pass (medium segments and chunks), then where `combine` the
// combine pass, whose input binding is the partials.
void add_range_passes(const SegmentedReducePlan& p, const SegmentBindings& b, const SegmentPush& push, bool combine,
                      std::vector<Pass>& passes) {
  passes.push_back(segmented_pass(p.ranges_kernel, b, push, p.ranges_groups, "ranges"));
  if (!combine) return;
  SegmentBindings partials_in = b;
  partials_in.input = b.partials;
  SegmentPush c = push;
  c.flags |= kCombine;
  c.in_offset = b.partials.shift;
  passes.push_back(segmented_pass(p.ranges_kernel, partials_in, c, std::min(p.ranges_groups, p.max_huge + 1),
                                  "combine"));
}

// The first pass over offset buffers, and the passes after it where max_count (clamped to the input) lets a
// segment be longer than short_max or medium_max. With lists, the header is cleared before it.
void add_offset_passes(const SegmentedReducePlan& p, const SegmentBindings& b, uint64_t segments,
                       int32_t indirect_entry, const BufferRange& scratch, std::vector<Pass>& passes) {
  const bool lists = b.bound > p.thresholds.short_max;
  const uint32_t flags = (lists ? kLists : 0u) | (indirect_entry >= 0 ? kIndirect : 0u);
  const SegmentPush push = base_push(p, b, segments, flags);
  const uint64_t groups = (segments + p.workgroup_size - 1) / p.workgroup_size;
  Pass first = segmented_pass(p.segments_kernel, b, push, groups, "segments");
  first.indirect_entry = indirect_entry;
  first.indirect_region = b.region;
  first.fill_before = lists;
  // The header, and the start of the medium list up to 16 KiB: NVIDIA's small fills cost more (plan_common.hpp).
  static_assert(kHeaderWords * 4 == kStateHeaderBytes);
  first.fill = {scratch.buffer, scratch.offset, state_clear_bytes(0, 0, p.words_bytes)};
  passes.push_back(std::move(first));
  if (lists) add_range_passes(p, b, push, b.bound > p.thresholds.medium_max, passes);
}

// The buffer checks every record shares: input (at least one element, or the `need_input` elements
// record_fixed reads), output and offsets for `segments`, scratch, and the overlaps that would race.
Result<void> check_segmented_buffers(const SegmentedReducePlan& p, const char* call, const BufferRange& input,
                                     uint64_t need_input, const BufferRange& output, const BufferRange* begin,
                                     const BufferRange* end, uint64_t segments, const BufferRange& scratch) {
  const ScratchRequirements need{p.indirect_offset + kIndirectRegionBytes, p.scratch_align, 0};
  const VkDeviceSize in_bytes = std::max<uint64_t>(need_input, 1) * p.elem, out_bytes = segments * p.elem;
  if (auto ok = check_range(input, in_bytes, p.elem, "input", true); !ok) return with_call(ok, call);
  if (auto ok = check_range(output, out_bytes, p.elem, "output", true); !ok) return with_call(ok, call);
  for (const auto& [range, what] : {std::pair{begin, "begin offsets"}, std::pair{end, "end offsets"}})
    if (range)
      if (auto ok = check_range(*range, segments * 4, 4, what, true); !ok) return with_call(ok, call);
  if (auto ok = check_scratch(scratch, need, call); !ok) return ok;
  const VkDeviceSize input_bytes = std::min<VkDeviceSize>(input.size, p.desc.max_count * p.elem);
  const std::array<std::pair<const BufferRange*, VkDeviceSize>, 4> read = {
      {{&input, input_bytes}, {begin, segments * 4}, {end, segments * 4}, {&scratch, need.size}}};
  const char* names[] = {"input", "begin offsets", "end offsets", "scratch"};
  for (size_t i = 0; i < read.size(); ++i) {
    if (!read[i].first) continue;
    if (overlaps(output, out_bytes, *read[i].first, read[i].second))
      return make_error(Status::invalid_argument, call, ": output and ", names[i], " ranges overlap");
    if (i < 3 && overlaps(scratch, need.size, *read[i].first, read[i].second))
      return make_error(Status::invalid_argument, call, ": scratch and ", names[i], " ranges overlap");
  }
  return {};
}

}  // namespace
}  // namespace detail

Result<void> SegmentedReduce::record(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                                     const BufferRange& begin_offsets, const BufferRange& end_offsets,
                                     uint64_t segments, const BufferRange& scratch) const {
  const detail::SegmentedReducePlan& p = *plan_;
  constexpr const char* call = "SegmentedReduce::record";
  if (segments > p.desc.max_segments)
    return make_error(Status::invalid_argument, call, ": segments ", segments, " exceeds max_segments ",
                      p.desc.max_segments);
  if (auto ok = detail::check_segmented_buffers(p, call, input, 0, output, &begin_offsets, &end_offsets, segments,
                                                scratch);
      !ok)
    return ok;
  if (!cmd) return make_error(Status::invalid_argument, call, ": command buffer is VK_NULL_HANDLE");
  if (segments == 0) return {};
  const auto b = detail::bind_segmented(*p.context, p, input, output, &begin_offsets, &end_offsets, segments, scratch);
  std::vector<detail::Pass> passes;
  detail::add_offset_passes(p, b, segments, -1, scratch, passes);
  return detail::record_passes(*p.context, *p.descriptors, cmd, passes, "SegmentedReduce", "record");
}

Result<void> SegmentedReduce::record_fixed(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                                           uint64_t segment_size, uint64_t segments, const BufferRange& scratch) const {
  const detail::SegmentedReducePlan& p = *plan_;
  constexpr const char* call = "SegmentedReduce::record_fixed";
  if (segments > p.desc.max_segments)
    return make_error(Status::invalid_argument, call, ": segments ", segments, " exceeds max_segments ",
                      p.desc.max_segments);
  if (segment_size > p.desc.max_count || segments * segment_size > p.desc.max_count)
    return make_error(Status::invalid_argument, call, ": ", segments, " segments of ", segment_size,
                      " elements exceed max_count ", p.desc.max_count);
  const uint64_t elements = segments * segment_size;
  if (auto ok = detail::check_segmented_buffers(p, call, input, elements, output, nullptr, nullptr, segments, scratch);
      !ok)
    return ok;
  if (!cmd) return make_error(Status::invalid_argument, call, ": command buffer is VK_NULL_HANDLE");
  if (segments == 0) return {};
  const auto b = detail::bind_segmented(*p.context, p, input, output, nullptr, nullptr, segments, scratch);
  detail::SegmentPush push = detail::base_push(p, b, segments, detail::kFixed);
  push.segment_size = uint32_t(segment_size);
  std::vector<detail::Pass> passes;
  const SegmentThresholds& t = p.thresholds;
  if (segment_size <= t.short_max)
    passes.push_back(detail::segmented_pass(p.segments_kernel, b, push,
                                            (segments + p.workgroup_size - 1) / p.workgroup_size, "segments"));
  else
    detail::add_range_passes(p, b, push, segment_size > t.medium_max, passes);
  return detail::record_passes(*p.context, *p.descriptors, cmd, passes, "SegmentedReduce", "record_fixed");
}

Result<void> SegmentedReduce::record_indirect(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                                              const BufferRange& begin_offsets, const BufferRange& end_offsets,
                                              const BufferRange& segment_count, const BufferRange& scratch) const {
  const detail::SegmentedReducePlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  constexpr const char* call = "SegmentedReduce::record_indirect";
  const uint64_t max_segments = p.desc.max_segments;
  const uint64_t groups = (max_segments + p.workgroup_size - 1) / p.workgroup_size;
  if (auto ok = detail::check_indirect_limits(c, max_segments, max_segments, groups, "SegmentedReduce"); !ok)
    return ok;
  if (auto ok = detail::check_count_buffer(segment_count, call); !ok) return ok;
  if (auto ok = detail::check_segmented_buffers(p, call, input, 0, output, &begin_offsets, &end_offsets, max_segments,
                                                scratch);
      !ok)
    return ok;
  const ScratchRequirements need = scratch_requirements();
  if (detail::overlaps(scratch, need.size, segment_count, 4) ||
      detail::overlaps(output, max_segments * p.elem, segment_count, 4))
    return make_error(Status::invalid_argument, call, ": the segment count overlaps scratch or output");
  const auto b = detail::bind_segmented(c, p, input, output, &begin_offsets, &end_offsets, max_segments, scratch);
  std::vector<detail::Pass> passes;
  passes.push_back(detail::make_indirect_args_pass(c, p.args_kernel, segment_count, b.region, max_segments,
                                                   {{p.workgroup_size, 0, 0, 0}}));
  detail::add_offset_passes(p, b, max_segments, 0, scratch, passes);
  return detail::record_passes(c, *p.descriptors, cmd, passes, "SegmentedReduce", "record_indirect");
}

}  // namespace vkprim
