// Reduce: the classic progression as multi-level plans (Harris, "Optimizing Parallel Reduction in
// CUDA", NVIDIA 2007), plus a grid-stride kernel with 16-byte vector loads.
#include "vkprim/reduce.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "indirect.hpp"
#include "plan_common.hpp"
#include "shader_groups.hpp"

namespace vkprim {

const char* to_string(ReduceAlgorithm a) {
  switch (a) {
    case ReduceAlgorithm::automatic: return "automatic";
    case ReduceAlgorithm::interleaved_divergent: return "interleaved_divergent";
    case ReduceAlgorithm::interleaved_strided: return "interleaved_strided";
    case ReduceAlgorithm::sequential: return "sequential";
    case ReduceAlgorithm::first_add_during_load: return "first_add_during_load";
    case ReduceAlgorithm::unrolled_subgroup: return "unrolled_subgroup";
    case ReduceAlgorithm::unrolled_complete: return "unrolled_complete";
    case ReduceAlgorithm::grid_stride: return "grid_stride";
    case ReduceAlgorithm::ordered: return "ordered";
  }
  return "unknown";
}

bool parse(const char* name, ReduceAlgorithm& out) {
  return detail::parse_enum(name, ReduceAlgorithm::ordered, out);
}

namespace detail {

namespace {

constexpr uint32_t kPassInVectors = 1u, kPassIndirect = 2u;  // common/pass_io.glsl flags

// The kernel of each algorithm (automatic resolves to one first).
constexpr KernelName reduce_kernel(ReduceAlgorithm a) {
  switch (a) {
    case ReduceAlgorithm::interleaved_divergent: return kernel_name("reduce/interleaved_divergent");
    case ReduceAlgorithm::interleaved_strided: return kernel_name("reduce/interleaved_strided");
    case ReduceAlgorithm::sequential: return kernel_name("reduce/sequential");
    case ReduceAlgorithm::first_add_during_load: return kernel_name("reduce/first_add_during_load");
    case ReduceAlgorithm::unrolled_subgroup: return kernel_name("reduce/unrolled_subgroup");
    case ReduceAlgorithm::unrolled_complete: return kernel_name("reduce/unrolled_complete");
    case ReduceAlgorithm::ordered: return kernel_name("reduce/ordered");
    case ReduceAlgorithm::automatic:
    case ReduceAlgorithm::grid_stride: break;
  }
  return kernel_name("reduce/grid_stride");
}

struct ReduceShape {
  uint32_t workgroup_size;
  uint32_t items;             // specialization constant ITEMS
  bool uses_subgroups;
  uint64_t elements_per_group;  // elements one workgroup covers per tile
  uint64_t max_groups;          // 0 = one group per tile; else the grid is capped (grid-stride)
};

ReduceShape shape_of(ReduceAlgorithm a, const ContextImpl& c, const ReduceDesc& desc) {
  const DataType type = desc.type;
  const uint32_t wg = 256;
  if (a == ReduceAlgorithm::ordered) {
    // One tile per workgroup: ITEMS rows of the largest workgroup whose ordered row scans fit.
    const uint32_t ordered_wg = user_workgroup(c, wg, desc.user_operator->size);
    const uint32_t items =
        desc.tuning.vectors_per_thread ? desc.tuning.vectors_per_thread : user_items(desc.user_operator->size);
    return {ordered_wg, items, true, uint64_t(ordered_wg) * items, 0};
  }
  switch (a) {
    case ReduceAlgorithm::interleaved_divergent: return {wg, 1, false, wg, 0};
    case ReduceAlgorithm::interleaved_strided: return {wg, 1, false, wg, 0};
    case ReduceAlgorithm::sequential: return {wg, 1, false, wg, 0};
    case ReduceAlgorithm::first_add_during_load: return {wg, 1, false, 2 * wg, 0};
    case ReduceAlgorithm::unrolled_subgroup: return {wg, 1, true, 2 * wg, 0};
    case ReduceAlgorithm::unrolled_complete: return {wg, 1, true, 2 * wg, 0};
    default: break;
  }
  // grid_stride: a tile is WG_SIZE threads x ITEMS vectors of 16 bytes; the grid is capped so that one
  // more level finishes the reduction. CPU drivers run a workgroup per core, so a small grid suffices.
  // Grid: one full wave of resident workgroups where the driver reports its compute units (each group
  // then loops over equal shares, so none waits for a second wave); 2048 otherwise; CPU drivers run a
  // workgroup per core, so a small grid suffices there.
  const uint32_t items = desc.tuning.vectors_per_thread ? desc.tuning.vectors_per_thread : 4u;
  const uint32_t vec = 16 / size_of(type);
  uint64_t cap = 2048;
  if (c.caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU) cap = 64;
  else if (c.caps.compute_units && c.caps.threads_per_compute_unit >= wg)
    cap = uint64_t(c.caps.compute_units) * (c.caps.threads_per_compute_unit / wg);
  if (desc.tuning.max_workgroups) cap = desc.tuning.max_workgroups;
  return {wg, items, true, uint64_t(wg) * items * vec, cap};
}

}  // namespace

struct ReducePlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  ReduceDesc desc;
  ReduceAlgorithm algorithm = ReduceAlgorithm::grid_stride;
  ReduceShape shape{};
  uint32_t elem = 4;
  uint32_t vec = 4;                   // elements per 16-byte vector load (1 for user operators)
  const Kernel* kernel = nullptr;
  uint64_t window = 0;               // elements per binding window (multiple of elements_per_group)
  VkDeviceSize scratch_align = 16;
  VkDeviceSize region_bytes[2] = {};  // ping-pong partial regions
  VkDeviceSize indirect_offset = 0;   // record_indirect's args region (after the partials)
  const Kernel* args_kernel = nullptr;
  bool indirect_binding = false;      // grid_stride: binding 2 is the indirect region
  std::unique_ptr<DescriptorSets> descriptors;

  uint64_t groups_for(uint64_t n) const {
    const uint64_t tiles = std::max<uint64_t>(1, (n + shape.elements_per_group - 1) / shape.elements_per_group);
    return shape.max_groups ? std::min(tiles, shape.max_groups) : tiles;
  }
  // Partials a level leaves for n inputs: windows each reduce to their own groups.
  uint64_t partials_for(uint64_t n) const {
    if (n <= window) return groups_for(n);
    uint64_t total = 0;
    for (uint64_t first = 0; first < n; first += window) total += groups_for(std::min(window, n - first));
    return total;
  }
  uint64_t level_count(uint64_t n) const {
    uint64_t levels = 1;
    for (uint64_t p = partials_for(n); p > 1; p = partials_for(p)) ++levels;
    return levels;
  }
};

}  // namespace detail

using detail::make_error;

Reduce::Reduce(std::unique_ptr<detail::ReducePlan> plan) : plan_(std::move(plan)) {}
Reduce::Reduce(Reduce&&) noexcept = default;
Reduce& Reduce::operator=(Reduce&&) noexcept = default;
Reduce::~Reduce() = default;

const ReduceDesc& Reduce::desc() const { return plan_->desc; }
ReduceAlgorithm Reduce::algorithm() const { return plan_->algorithm; }
uint64_t Reduce::sequential_run(uint64_t count) const {
  const auto& p = *plan_;
  const uint64_t threads = p.groups_for(std::min(count, p.window)) * p.shape.workgroup_size;
  return std::max<uint64_t>(1, (std::min(count, p.window) + threads - 1) / threads);
}

ScratchRequirements Reduce::scratch_requirements() const {
  const auto& p = *plan_;
  return {p.indirect_offset + detail::kIndirectRegionBytes, p.scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}

uint32_t Reduce::dispatch_count(uint64_t count) const {
  const auto& p = *plan_;
  uint32_t dispatches = 0;
  uint64_t n = count;
  while (true) {
    dispatches += uint32_t(std::max<uint64_t>(1, (n + p.window - 1) / p.window));
    const uint64_t partials = p.partials_for(n);
    if (partials <= 1) break;
    n = partials;
  }
  return dispatches;
}

void Reduce::release_descriptor_sets() const { plan_->descriptors->release(); }

namespace detail {
namespace {

// Every check of the description, before any choice is made: the algorithm, the operator or the type and
// op (with the algorithm they allow), max_count, then the tuning.
Result<void> check_reduce_desc(const ContextImpl& c, const ReduceDesc& desc) {
  if (int(desc.algorithm) < 0 || int(desc.algorithm) > int(ReduceAlgorithm::ordered))
    return make_error(Status::invalid_argument, "Reduce: unknown algorithm ", int(desc.algorithm));
  if (const UserOperator* user = desc.user_operator) {
    if (auto ok = check_user_operator(*user, "Reduce"); !ok) return ok.error();
    if (desc.algorithm != ReduceAlgorithm::automatic && desc.algorithm != ReduceAlgorithm::ordered)
      return make_error(Status::invalid_argument, "Reduce: ", to_string(desc.algorithm), " pairs values out of order; ",
                        "user operator ", user->name, " reduces with ordered (automatic)");
  } else {
    if (auto ok = check_type_op(c, desc.type, desc.op, "Reduce"); !ok) return ok.error();
    if (desc.algorithm == ReduceAlgorithm::ordered)
      return make_error(Status::invalid_argument, "Reduce: ordered is built for user operators only; ",
                        to_string(desc.type), " ", to_string(desc.op), " commutes (use automatic)");
  }
  if (desc.max_count == 0 || desc.max_count > kMaxCount)
    return make_error(Status::invalid_argument, "Reduce: max_count ", desc.max_count, " must be in 1..2^40");
  if (auto ok = check_tuning("Reduce", desc.tuning, tune_max_workgroups | tune_vectors_per_thread); !ok)
    return ok.error();
  if (desc.tuning.vectors_per_thread > 16)
    return make_error(Status::invalid_argument, "Reduce: tuning.vectors_per_thread ", desc.tuning.vectors_per_thread,
                      " exceeds 16");
  return {};
}

// deterministic changes no choice: every algorithm combines in a tree fixed by the plan and the count (no
// atomics, no look-back). An algorithm that combines by timing must be refused or avoided here under it.
ReduceAlgorithm resolve_reduce_algorithm(const ReduceDesc& desc) {
  if (desc.algorithm != ReduceAlgorithm::automatic) return desc.algorithm;
  return desc.user_operator ? ReduceAlgorithm::ordered : ReduceAlgorithm::grid_stride;
}

// The plan's reduction kernel: its shape, its type and op or the user operator, its bindings.
Result<void> build_reduce_kernel(ContextImpl& c, const ReduceDesc& desc, ReducePlan& plan) {
  const UserOperator* user = desc.user_operator;
  KernelDesc kd{reduce_kernel(plan.algorithm)};
  kd.plan = "Reduce";
  kd.group = user ? user->kernels : &kShaderGroup_reduce;
  if (!user) kd.op = desc.op;
  kd.workgroup_size = plan.shape.workgroup_size;
  kd.items = plan.shape.items;
  auto variant = value_variant(c, desc.type, desc.op, user, plan.shape.uses_subgroups, plan.shape.workgroup_size);
  if (!variant) return std::move(variant).error();
  kd.variant = variant.value();
  kd.uses_subgroups = plan.shape.uses_subgroups && kd.variant.find(".nosg") == std::string::npos;
  auto kernel = get_kernel(c, kd);
  if (!kernel) return std::move(kernel).error();
  plan.kernel = kernel.value();
  return {};
}

// The binding window, checked against the dispatch limits, and scratch: the two ping-pong partial regions,
// then record_indirect's args region.
Result<void> lay_out_reduce_scratch(const ContextImpl& c, const ReduceDesc& desc, ReducePlan& plan) {
  plan.window = window_elements(c, plan.elem, plan.shape.elements_per_group);
  if (auto fits = split_groups(c, plan.groups_for(std::min(plan.window, desc.max_count))); !fits)
    return make_error(Status::unsupported, "Reduce: max_count ", desc.max_count, " needs more workgroups per dispatch",
                      " than the device allows (", fits.error().message, ")");
  plan.scratch_align = binding_alignment(c);
  // Level sizes only shrink, so the largest two levels of max_count bound every smaller count.
  const uint64_t level1 = plan.partials_for(desc.max_count);
  const uint64_t level2 = level1 > 1 ? plan.partials_for(level1) : 0;
  const VkDeviceSize granule = region_granule(plan.scratch_align, plan.elem);
  plan.region_bytes[0] = level1 > 1 ? align_up(level1 * plan.elem, granule) : 0;
  plan.region_bytes[1] = level2 > 1 ? align_up(level2 * plan.elem, granule) : 0;
  plan.indirect_offset = plan.region_bytes[0] + plan.region_bytes[1];
  return {};
}

}  // namespace
}  // namespace detail

Result<Reduce> Reduce::create(Context& context, const ReduceDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_reduce_desc(c, desc); !ok) return ok.error();
  const UserOperator* user = desc.user_operator;
  auto plan = std::make_unique<detail::ReducePlan>();
  plan->context = &c;
  plan->desc = desc;
  plan->algorithm = detail::resolve_reduce_algorithm(desc);
  plan->shape = detail::shape_of(plan->algorithm, c, desc);
  plan->elem = user ? user->size : size_of(desc.type);
  plan->vec = user ? 1 : 16 / plan->elem;
  // Binding 2 is the record_indirect region where the kernel has one (common/pass_io.glsl).
  plan->indirect_binding = detail::reduce_kernel(plan->algorithm).bindings() > 2;
  if (auto ok = detail::build_reduce_kernel(c, desc, *plan); !ok) return ok.error();
  if (auto ok = detail::lay_out_reduce_scratch(c, desc, *plan); !ok) return ok.error();
  if (plan->indirect_binding) {
    auto args = detail::indirect_args_kernel(c, "Reduce");
    if (!args) return std::move(args).error();
    plan->args_kernel = args.value();
  }
  plan->descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return Reduce(std::move(plan));
}

namespace detail {
namespace {

// The buffer checks of record (n = count) and record_indirect (n = max_count, the most it may read).
Result<void> check_buffers(const ReducePlan& p, const char* call, const BufferRange& input, const BufferRange& output,
                           uint64_t n, const BufferRange& scratch, const ScratchRequirements& need) {
  if (auto ok = check_range(input, n * p.elem, p.elem, "input", n > 0); !ok) return with_call(ok, call);
  if (auto ok = check_range(output, p.elem, p.elem, "output", true); !ok) return with_call(ok, call);
  if (auto ok = check_scratch(scratch, need, call); !ok) return ok;
  if (n > 0 && overlaps(input, n * p.elem, output, p.elem))
    return make_error(Status::invalid_argument, call, ": input and output ranges overlap");
  if (need.size > 0 && overlaps(scratch, need.size, output, p.elem))
    return make_error(Status::invalid_argument, call, ": scratch and output ranges overlap");
  if (need.size > 0 && n > 0 && overlaps(scratch, need.size, input, n * p.elem))
    return make_error(Status::invalid_argument, call, ": scratch and input ranges overlap");
  return {};
}

}  // namespace
}  // namespace detail

Result<void> Reduce::record(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output, uint64_t count,
                            const BufferRange& scratch) const {
  const detail::ReducePlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  const ScratchRequirements need = scratch_requirements();
  if (count > p.desc.max_count)
    return make_error(Status::invalid_argument, "Reduce::record: count ", count, " exceeds max_count ", p.desc.max_count);
  if (auto ok = detail::check_buffers(p, "Reduce::record", input, output, count, scratch, need); !ok) return ok;

  std::vector<detail::Pass> passes;
  BufferRange source = count > 0 ? input : output;  // count 0 reads nothing; any valid binding will do
  uint64_t n = count;
  for (uint32_t level = 0;; ++level) {
    const uint64_t partials = p.partials_for(n);
    const bool last = partials <= 1;
    const BufferRange target =
        last ? output
             : BufferRange{scratch.buffer, scratch.offset + (level % 2 ? p.region_bytes[0] : 0), p.region_bytes[level % 2]};
    uint64_t written = 0;
    uint64_t first = 0;
    do {
      const uint64_t wn = std::min(p.window, n - first);
      const uint64_t groups = p.groups_for(wn);
      const auto in = detail::bind_elements(c, source, first, wn, p.elem);
      const auto out = detail::bind_elements(c, target, written, groups, p.elem);
      detail::Pass pass;
      pass.kernel = p.kernel;
      pass.buffers[0] = in.bound;
      pass.buffers[1] = out.bound;
      if (p.indirect_binding) pass.buffers[2] = in.bound;  // statically used, never read by a direct pass
      pass.push = {uint32_t(wn), in.shift, out.shift, uint32_t(groups), in.shift % p.vec == 0 ? detail::kPassInVectors : 0u};
      pass.groups = groups;
      pass.label = std::string("vkprim ") + p.kernel->desc.kernel.name() + " level " + std::to_string(level) +
                   (n > p.window ? " window " + std::to_string(first / p.window) : std::string());
      passes.push_back(std::move(pass));
      written += groups;
      first += wn;
    } while (first < n);
    if (last) break;
    source = target;
    n = partials;
  }
  return detail::record_passes(c, *p.descriptors, cmd, passes, "Reduce", "record");
}

Result<void> Reduce::record_indirect(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                                     const BufferRange& count_buffer, const BufferRange& scratch) const {
  const detail::ReducePlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  if (!p.indirect_binding)
    return make_error(Status::unsupported, "Reduce::record_indirect: ", to_string(p.algorithm),
                      " sizes its levels from the count on the CPU; use grid_stride (automatic)");
  const uint64_t max_count = p.desc.max_count;
  if (auto ok = detail::check_indirect_limits(c, max_count, p.window, p.groups_for(max_count), "Reduce"); !ok) return ok;
  const ScratchRequirements need = scratch_requirements();
  if (auto ok = detail::check_count_buffer(count_buffer, "Reduce::record_indirect"); !ok) return ok;
  if (auto ok = detail::check_buffers(p, "Reduce::record_indirect", input, output, max_count, scratch, need); !ok)
    return ok;
  if (detail::overlaps(scratch, need.size, count_buffer, 4) || detail::overlaps(output, p.elem, count_buffer, 4))
    return make_error(Status::invalid_argument, "Reduce::record_indirect: the count buffer overlaps scratch or output");

  // The level structure of max_count serves every smaller count: a level left with one partial copies it.
  const uint32_t levels = uint32_t(p.level_count(max_count));
  if (levels > detail::kMaxIndirectEntries)
    return make_error(Status::unsupported, "Reduce::record_indirect: ", levels, " levels exceed ",
                      detail::kMaxIndirectEntries);
  const uint32_t cap = uint32_t(std::min<uint64_t>(p.shape.max_groups, 0xffffffffull));
  std::vector<detail::IndirectEntry> entries;
  for (uint32_t level = 0; level < levels; ++level)
    entries.push_back({uint32_t(p.shape.elements_per_group), 1, cap, level});
  const detail::BoundBuffer region{scratch.buffer, scratch.offset + p.indirect_offset, detail::kIndirectRegionBytes};

  std::vector<detail::Pass> passes;
  passes.push_back(detail::make_indirect_args_pass(c, p.args_kernel, count_buffer, region, max_count, entries));
  BufferRange source = input;
  uint64_t n = max_count;
  for (uint32_t level = 0; level < levels; ++level) {
    const uint64_t partials = p.partials_for(n);
    const bool last = level + 1 == levels;
    const BufferRange target =
        last ? output
             : BufferRange{scratch.buffer, scratch.offset + (level % 2 ? p.region_bytes[0] : 0), p.region_bytes[level % 2]};
    const auto in = detail::bind_elements(c, source, 0, n, p.elem);
    const auto out = detail::bind_elements(c, target, 0, last ? 1 : partials, p.elem);
    detail::Pass pass;
    pass.kernel = p.kernel;
    pass.buffers = {in.bound, out.bound, region};
    pass.push = {uint32_t(n), in.shift, out.shift, uint32_t(partials),
                 (in.shift % p.vec == 0 ? detail::kPassInVectors : 0u) | detail::kPassIndirect, level};
    pass.indirect_entry = int32_t(level);
    pass.indirect_region = region;
    pass.label =
        std::string("vkprim ") + p.kernel->desc.kernel.name() + " level " + std::to_string(level) + " (indirect)";
    passes.push_back(std::move(pass));
    source = target;
    n = partials;
  }
  return detail::record_passes(c, *p.descriptors, cmd, passes, "Reduce", "record_indirect");
}

}  // namespace vkprim
