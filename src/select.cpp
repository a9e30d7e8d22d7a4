// Select and Partition (stream compaction). One plan type serves both; Partition differs by keeping the
// rejected elements.
//   chained (shaders/select/chained.comp): Merrill & Garland, "Single-pass Parallel Prefix Scan with
//     Decoupled Look-back" (2016) applied to the tiles' kept counts, with Smith, Levien & Owens, "Decoupled
//     Fallback" (SPAA 2025) so it terminates without forward progress. Partition adds
//     shaders/select/copy_rejected.comp (the rejected elements wait in scratch until the total is known).
//   count_scan_scatter (tile_count, scan_counts, scatter): the portable multi-pass form for devices
//     without the Vulkan memory model (the classic count / scan / scatter of e.g. Billeter, Olsson &
//     Assarsson, "Efficient Stream Compaction on Wide SIMD Many-Core Architectures", HPG 2009).
// Every kernel reads its element count once at the top (push constant, or the record_indirect entry) and
// skips workgroups it does not need, so the same passes serve record and record_indirect.
#include "vkprim/select.hpp"

#include <algorithm>
#include <array>
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

const char* to_string(SelectPredicate p) {
  switch (p) {
    case SelectPredicate::flagged: return "flagged";
    case SelectPredicate::less: return "less";
    case SelectPredicate::less_equal: return "less_equal";
    case SelectPredicate::greater: return "greater";
    case SelectPredicate::greater_equal: return "greater_equal";
    case SelectPredicate::equal: return "equal";
    case SelectPredicate::not_equal: return "not_equal";
  }
  return "unknown";
}

bool parse(const char* name, SelectPredicate& out) { return detail::parse_enum(name, SelectPredicate::not_equal, out); }

const char* to_string(SelectAlgorithm a) {
  switch (a) {
    case SelectAlgorithm::automatic: return "automatic";
    case SelectAlgorithm::chained: return "chained";
    case SelectAlgorithm::count_scan_scatter: return "count_scan_scatter";
  }
  return "unknown";
}

bool parse(const char* name, SelectAlgorithm& out) {
  return detail::parse_enum(name, SelectAlgorithm::count_scan_scatter, out);
}

const char* to_string(SelectOutput o) {
  switch (o) {
    case SelectOutput::elements: return "elements";
    case SelectOutput::indices: return "indices";
  }
  return "unknown";
}

bool parse(const char* name, SelectOutput& out) { return detail::parse_enum(name, SelectOutput::indices, out); }

const char* to_string(RejectedOrder o) {
  switch (o) {
    case RejectedOrder::input: return "input";
    case RejectedOrder::reversed: return "reversed";
  }
  return "unknown";
}

bool parse(const char* name, RejectedOrder& out) { return detail::parse_enum(name, RejectedOrder::reversed, out); }

namespace detail {

namespace {

constexpr uint32_t kBindings = kernel_name("select/scatter").bindings();  // every select kernel's (select_io.glsl)
// The tile: 256 invocations x 4 vectors; no other shape measured faster overall
// (docs/PERFORMANCE.md, Select and Partition).
constexpr uint32_t kDefaultWorkgroup = 256;
constexpr uint32_t kDefaultVectors = 4;
constexpr uint32_t kScanCountsWorkgroup = 256;
constexpr uint32_t kCopyWorkgroup = 256;
constexpr uint32_t kCopyItems = 4;  // copy_rejected: 4 x 4 elements per invocation
constexpr uint64_t kCopyPerGroup = uint64_t(kCopyWorkgroup) * kCopyItems * 4;
constexpr VkDeviceSize kStatePerTileBytes = 8;  // two 16-bit-part words, or one u64 word

// Mode bits of common/select_io.glsl (the predicate is bits 0..2).
enum : uint32_t {
  kModePartition = 8u,
  kModeInVectors = 16u,
  kModeFlagVectors = 32u,
  kModeIndirect = 64u,
  kModeIndices = 128u,
  kModeReversed = 256u,
};

// Indirect entries: 0 = the tiles of the count (at least one, so count 0 writes selected_count);
// chained Partition 1 = the copy of the rejected elements; count_scan_scatter 1 = the one-workgroup scan,
// whose element count is entry 0's workgroups (the tiles).
enum : int32_t { kEntryTiles = 0, kEntrySecond = 1 };

}  // namespace

struct SelectPlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  SelectDesc desc;
  bool partition = false;
  const char* name = "Select";
  SelectAlgorithm algorithm = SelectAlgorithm::chained;
  uint32_t elem = 4;
  uint32_t out_elem = 4;        // bytes per output element: elem, or 4 for indices
  bool reads_input = true;      // false for flagged indices
  uint32_t wg = kDefaultWorkgroup;
  uint32_t items = kDefaultVectors;
  uint64_t tile_elements = 0;
  uint64_t max_tiles = 1;
  const Kernel* chained = nullptr;
  const Kernel* copy_rejected = nullptr;
  const Kernel* tile_count = nullptr;
  const Kernel* scan_counts = nullptr;
  const Kernel* scatter = nullptr;
  const Kernel* args = nullptr;
  // Scratch: chained = [tile state for max_tiles][Partition in input order: spill of max_count elements]
  // [indirect args];
  // count_scan_scatter = [tile counts][indirect args].
  VkDeviceSize state_bytes = 0, spill_offset = 0, spill_bytes = 0, counts_bytes = 0, indirect_offset = 0;
  VkDeviceSize scratch_bytes = 0, scratch_align = 16;
  std::unique_ptr<DescriptorSets> descriptors;

  uint64_t tiles_for(uint64_t n) const { return std::max<uint64_t>(1, ceil_div(n, tile_elements)); }
  bool chained_path() const { return algorithm == SelectAlgorithm::chained; }
  // Partition with RejectedOrder::reversed: every element goes where it belongs in one pass.
  bool reversed() const { return partition && desc.rejected_order == RejectedOrder::reversed; }
  // The chained Partition that parks its rejected elements in scratch until the total is known.
  bool spills() const { return chained_path() && partition && !reversed(); }
  uint32_t dispatches(uint64_t count) const {
    if (!chained_path()) return 3;
    return spills() && count > 0 ? 2 : 1;
  }
};

namespace {

struct Checked {
  const char* what;
  BufferRange range;
  VkDeviceSize bytes;
};

// Every argument check of record / record_indirect; `n` is the count (max_count for record_indirect).
Result<void> check_arguments(const SelectPlan& p, const char* call, const SelectOperands& o, uint64_t n,
                             const BufferRange* count_buffer) {
  const auto& [input, flags, output, selected_count, scratch] = o;
  const VkDeviceSize bytes = p.reads_input ? n * p.elem : 0;
  const VkDeviceSize out_bytes = n * p.out_elem;
  const bool flagged = p.desc.predicate == SelectPredicate::flagged;
  if (auto ok = check_range(input, bytes, p.elem, "input", n > 0 && p.reads_input); !ok)
    return with_context(ok, p.name, call);
  if (flagged && n > 0 && !flags.buffer)
    return make_error(Status::invalid_argument, p.name, "::", call,
                      ": the flagged predicate needs flags (a u32 per element), but flags is VK_NULL_HANDLE");
  if (flagged)
    if (auto ok = check_range(flags, n * 4, 4, "flags", n > 0); !ok) return with_context(ok, p.name, call);
  if (auto ok = check_range(output, out_bytes, p.out_elem, "output", n > 0); !ok)
    return with_context(ok, p.name, call);
  if (!selected_count.buffer)
    return make_error(Status::invalid_argument, p.name, "::", call, ": selected_count buffer is VK_NULL_HANDLE");
  if (selected_count.offset % 4)
    return make_error(Status::invalid_argument, p.name, "::", call, ": selected_count offset ", selected_count.offset,
                      " is not a multiple of 4 (the count is a u32)");
  if (const std::string why = range_size_problem(selected_count.size, 4); !why.empty())
    return make_error(Status::invalid_argument, p.name, "::", call, ": selected_count ", why, " (the count is a u32)");
  const ScratchRequirements need{p.scratch_bytes, p.scratch_align, 0};
  if (auto ok = check_scratch(scratch, need, p.name, call); !ok) return ok;
  std::vector<Checked> ranges = {{"input", input, bytes}, {"output", output, out_bytes}, {"selected_count", selected_count, 4},
                                 {"scratch", scratch, p.scratch_bytes}};
  if (flagged) ranges.push_back({"flags", flags, n * 4});
  if (count_buffer) ranges.push_back({"count_buffer", *count_buffer, 4});
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      const Checked& a = ranges[i];
      const Checked& b = ranges[j];
      if (!a.range.buffer || !b.range.buffer || a.bytes == 0 || b.bytes == 0) continue;
      if (!overlaps(a.range, a.bytes, b.range, b.bytes)) continue;
      const bool in_place = std::strcmp(a.what, "input") == 0 && std::strcmp(b.what, "output") == 0;
      return make_error(Status::invalid_argument, p.name, "::", call, ": ", a.what, " and ", b.what, " ranges overlap",
                        in_place ? " (in-place compaction is not supported: use a separate output)" : "");
    }
  return {};
}

// Builds the passes of one record / record_indirect.
class PassBuilder {
 public:
  PassBuilder(const SelectPlan& p, const SelectOperands& o, Comparand comparand, uint64_t bound_count)
      : p_(p), c_(*p.context), scratch_(o.scratch) {
    const auto& [input, flags, output, selected_count, scratch] = o;
    region_ = {scratch.buffer, scratch.offset + p.indirect_offset, kIndirectRegionBytes};
    // Bindings a pass does not read are bound to the (valid, aligned) indirect region.
    auto bind = [&](const BufferRange& r, uint32_t elem) {
      if (!r.buffer) return ElementBinding{region_, 0};
      return bind_elements(c_, r, 0, bound_count, elem);
    };
    const bool flagged = p.desc.predicate == SelectPredicate::flagged;
    const ElementBinding in = p.reads_input ? bind(input, p.elem) : ElementBinding{region_, 0};
    const ElementBinding fl = flagged ? bind(flags, 4) : ElementBinding{region_, 0};
    const ElementBinding out = bind(output, p.out_elem);
    const ElementBinding cnt = bind_elements(c_, selected_count, 0, 1, 4);
    const uint32_t vec = 16 / p.elem;
    buffers_[0] = in.bound;
    buffers_[1] = fl.bound;
    buffers_[3] = out.bound;
    buffers_[4] = cnt.bound;
    buffers_[5] = region_;
    push_[1] = in.shift | fl.shift << 8 | out.shift << 16 | cnt.shift << 24;
    push_[3] = detail::packed_knobs(c_, ceil_div(bound_count, p.tile_elements));
    push_[4] = uint32_t(p.desc.predicate) | (p.partition ? kModePartition : 0u) |
               (p.desc.output == SelectOutput::indices ? kModeIndices : 0u) | (p.reversed() ? kModeReversed : 0u) |
               (in.shift % vec == 0 ? kModeInVectors : 0u) | (fl.shift % vec == 0 ? kModeFlagVectors : 0u);
    push_[2] = uint32_t(p.spill_offset / 4);
    push_[5] = uint32_t(comparand.bits);
    push_[6] = uint32_t(comparand.bits >> 32);
  }

  // count: the CPU count, or (indirect) max_count for sizing the clears.
  void build(uint64_t count, bool indirect, const BufferRange* count_buffer, std::vector<Pass>& passes) {
    if (indirect) {
      std::vector<IndirectEntry> entries = {{uint32_t(p_.tile_elements), 1, 0, 0}};
      if (p_.spills()) entries.push_back({uint32_t(kCopyPerGroup), 0, 0, 0});
      if (!p_.chained_path()) entries.push_back({0, 1, 1, 1});
      passes.push_back(make_indirect_args_pass(c_, p_.args, *count_buffer, region_, p_.desc.max_count, entries));
    }
    const uint64_t tiles = p_.tiles_for(count);
    if (p_.chained_path()) {
      const BoundBuffer scratch_binding{scratch_.buffer, scratch_.offset, p_.state_bytes + p_.spill_bytes};
      Pass& chained = add(p_.chained, p_.partition ? "partition/chained" : "select/chained", scratch_binding, count,
                          tiles, indirect, kEntryTiles, passes);
      // Indirect: count is max_count here, so every tile the GPU count may need is cleared.
      clear_state(chained, state_clear_bytes(tiles, kStatePerTileBytes, p_.state_bytes));
      if (p_.spills() && (indirect || count > 0))
        add(p_.copy_rejected, "partition/copy_rejected", scratch_binding, count, ceil_div(count, kCopyPerGroup),
            indirect, kEntrySecond, passes);
      return;
    }
    const BoundBuffer counts{scratch_.buffer, scratch_.offset, p_.counts_bytes};
    const char* prefix = p_.partition ? "partition/" : "select/";
    add(p_.tile_count, (std::string(prefix) + "tile_count").c_str(), counts, count, tiles, indirect, kEntryTiles, passes);
    Pass& scan = add(p_.scan_counts, (std::string(prefix) + "scan_counts").c_str(), counts, tiles, 1, indirect,
                     kEntrySecond, passes);
    scan.push[4] &= ~(kModeInVectors | kModeFlagVectors);
    add(p_.scatter, (std::string(prefix) + "scatter").c_str(), counts, count, tiles, indirect, kEntryTiles, passes);
  }

 private:
  Pass& add(const Kernel* kernel, const std::string& what, const BoundBuffer& scratch_binding, uint64_t count,
            uint64_t groups, bool indirect, int32_t entry, std::vector<Pass>& passes) {
    Pass pass;
    pass.kernel = kernel;
    std::copy(buffers_.begin(), buffers_.end(), pass.buffers.begin());
    pass.buffers[2] = scratch_binding;
    std::copy(push_.begin(), push_.end(), pass.push.begin());
    pass.push[0] = uint32_t(count);
    pass.push[7] = uint32_t(entry);
    pass.groups = std::max<uint64_t>(1, groups);
    if (indirect) {
      pass.push[4] |= kModeIndirect;
      pass.indirect_entry = entry;
      pass.indirect_region = region_;
    }
    pass.label = "vkprim " + what + (indirect ? " (indirect)" : "");
    passes.push_back(std::move(pass));
    return passes.back();
  }

  void clear_state(Pass& pass, VkDeviceSize bytes) const {
    pass.fill_before = true;
    pass.fill = {scratch_.buffer, scratch_.offset, bytes};
    pass.fill_word = 0;
  }

  const SelectPlan& p_;
  ContextImpl& c_;
  BufferRange scratch_;
  BoundBuffer region_{};
  std::array<BoundBuffer, kBindings> buffers_{};
  std::array<uint32_t, 8> push_{};
};

const char* plan_name(bool partition) { return partition ? "Partition" : "Select"; }

// The algorithm a plan of `desc` runs (desc checked): automatic takes chained where the memory model is enabled.
SelectAlgorithm select_algorithm(const ContextImpl& c, const SelectDesc& desc) {
  if (desc.algorithm != SelectAlgorithm::automatic) return desc.algorithm;
  return c.caps.has(feature_memory_model) ? SelectAlgorithm::chained : SelectAlgorithm::count_scan_scatter;
}

// The tile: the tuning overrides, else the defaults above.
uint32_t select_workgroup(const Tuning& t) { return t.workgroup_size ? t.workgroup_size : kDefaultWorkgroup; }
uint32_t select_vectors(const Tuning& t) { return t.vectors_per_thread ? t.vectors_per_thread : kDefaultVectors; }

// Every check of the description: its enums, type and max_count, the algorithm against the device's
// features, then the tuning overrides.
Result<void> check_select_desc(const ContextImpl& c, const SelectDesc& desc, bool partition) {
  const char* name = plan_name(partition);
  if (int(desc.predicate) < 0 || int(desc.predicate) > int(SelectPredicate::not_equal))
    return make_error(Status::invalid_argument, name, ": unknown predicate ", int(desc.predicate));
  if (int(desc.algorithm) < 0 || int(desc.algorithm) > int(SelectAlgorithm::count_scan_scatter))
    return make_error(Status::invalid_argument, name, ": unknown algorithm ", int(desc.algorithm));
  if (desc.output != SelectOutput::elements && desc.output != SelectOutput::indices)
    return make_error(Status::invalid_argument, name, ": unknown output ", int(desc.output));
  if (desc.rejected_order != RejectedOrder::input && desc.rejected_order != RejectedOrder::reversed)
    return make_error(Status::invalid_argument, name, ": unknown rejected_order ", int(desc.rejected_order));
  if (!partition && desc.rejected_order != RejectedOrder::input)
    return make_error(Status::invalid_argument, name,
                      ": rejected_order reversed applies to Partition only (Select writes no rejected elements)");
  if (auto ok = check_type_op(c, desc.type, Op::add, name); !ok) return ok;
  if (desc.max_count == 0 || desc.max_count > 0xFFFFFFFFull)
    return make_error(Status::invalid_argument, name, ": max_count ", desc.max_count,
                      " must be in 1..2^32-1 (the count is a u32 on the GPU)");
  if (select_algorithm(c, desc) == SelectAlgorithm::chained && !c.caps.has(feature_memory_model))
    return make_error(Status::unsupported, name, ": chained needs the vulkanMemoryModel and ",
                      "vulkanMemoryModelDeviceScope features, which the device lacks or the caller did not enable ",
                      "(device_requirements() lists them); count_scan_scatter works without them");
  if (auto ok = check_tuning(name, desc.tuning, tune_workgroup_size | tune_vectors_per_thread); !ok) return ok;
  const uint32_t wg = select_workgroup(desc.tuning);
  if (wg < 64 || wg > 1024 || (wg & (wg - 1)) != 0)
    return make_error(Status::invalid_argument, name, ": tuning.workgroup_size ", wg,
                      " must be a power of two from 64 to 1024");
  if (const uint32_t items = select_vectors(desc.tuning); items > 8)
    return make_error(Status::invalid_argument, name, ": tuning.vectors_per_thread ", items, " exceeds 8");
  return {};
}

// The plan's algorithm, element sizes and tile (desc checked by check_select_desc).
std::unique_ptr<SelectPlan> resolve_select_policy(ContextImpl& c, const SelectDesc& desc, bool partition) {
  auto plan = std::make_unique<SelectPlan>();
  plan->context = &c;
  plan->desc = desc;
  plan->partition = partition;
  plan->name = plan_name(partition);
  plan->algorithm = select_algorithm(c, desc);
  plan->elem = size_of(desc.type);
  plan->out_elem = desc.output == SelectOutput::indices ? 4 : plan->elem;
  plan->reads_input = !(desc.output == SelectOutput::indices && desc.predicate == SelectPredicate::flagged);
  plan->wg = select_workgroup(desc.tuning);
  plan->items = select_vectors(desc.tuning);
  plan->tile_elements = uint64_t(plan->wg) * plan->items * (16 / plan->elem);
  plan->max_tiles = plan->tiles_for(desc.max_count);
  return plan;
}

// Scratch of the chained path: the tile state for max_tiles, then (spills) the rejected elements of max_count.
VkDeviceSize state_region_bytes(const SelectPlan& p, VkDeviceSize align) {
  return align_up(kStateHeaderBytes + p.max_tiles * kStatePerTileBytes, align);
}
VkDeviceSize spill_region_bytes(const SelectPlan& p, VkDeviceSize align) {
  return p.spills() ? align_up(p.desc.max_count * p.out_elem, align) : 0;
}

// The checks of the resolved tile and scratch against the device, before any kernel is built: shared
// memory, one binding for max_count, then the chained path's scratch binding.
Result<void> check_select_limits(const ContextImpl& c, const SelectPlan& p) {
  // Shared memory: one row of each subgroup staged at a time (16 bytes per invocation,
  // common/select_tile.glsl), the count scan's uvec4 per invocation, the look-back words.
  const uint64_t shared_bytes = uint64_t(p.wg) * 16 + (uint64_t(p.wg) + 1) * 16 + 16;
  if (shared_bytes > c.caps.max_shared_memory)
    return make_error(Status::unsupported, p.name, ": a tile of ", p.wg, " x ", p.items,
                      " vectors needs ", shared_bytes, " bytes of shared memory; the device allows ",
                      c.caps.max_shared_memory, " (lower workgroup_size or vectors_per_thread)");
  const uint64_t window = window_elements(c, p.elem, p.tile_elements);
  if (p.desc.max_count > window)
    return make_error(Status::unsupported, p.name, ": max_count ", p.desc.max_count, " ", to_string(p.desc.type),
                      " elements exceed one storage-buffer binding (", window,
                      " elements, from maxStorageBufferRange); compaction does not split into windows");
  if (!p.chained_path()) return {};
  const VkDeviceSize align = binding_alignment(c);
  const VkDeviceSize binding = state_region_bytes(p, align) + spill_region_bytes(p, align);
  if (binding > c.caps.max_storage_buffer_range)
    return make_error(Status::unsupported, p.name, ": the tile state and the spill of ", p.desc.max_count,
                      " rejected elements need a ", binding,
                      "-byte scratch binding; maxStorageBufferRange is ", c.caps.max_storage_buffer_range,
                      " (use RejectedOrder::reversed, count_scan_scatter or a smaller max_count)");
  return {};
}

// One kernel of shaders/select/.
struct SelectKernel {
  KernelName kernel;
  std::string variant;
  uint32_t workgroup_size, items;
  bool uses_subgroups;
  uint32_t rejected_order = 0;  // REJECTED_ORDER
};

Result<const Kernel*> get_select_kernel(ContextImpl& c, const char* plan, const SelectKernel& k) {
  KernelDesc kd{k.kernel};
  kd.plan = plan;
  kd.group = &kShaderGroup_select;
  kd.variant = k.variant;
  kd.workgroup_size = k.workgroup_size;
  kd.items = k.items;
  kd.uses_subgroups = k.uses_subgroups;
  kd.spec.rejected_order = k.rejected_order;
  return get_kernel(c, kd);
}

// Keeps the first failure of a series of kernel builds (each build still runs).
struct FirstFailure {
  Result<void> result{};
  void keep(const Kernel*& slot, Result<const Kernel*> k) {
    if (!result) return;
    if (!k) result = std::move(k).error();
    else slot = k.value();
  }
};

// The chained kernels by plan (Select, Partition) and tile state (16-bit parts, 64-bit atomic words).
constexpr KernelName kChainedKernels[2][2] = {
    {kernel_name("select/chained"), kernel_name("select/chained64")},
    {kernel_name("select/partition_chained"), kernel_name("select/partition_chained64")}};

// Builds the kernels of the plan's algorithm and record_indirect's args kernel; the first failure is returned.
Result<void> build_select_kernels(ContextImpl& c, SelectPlan& plan) {
  const std::string variant = std::string(to_string(plan.desc.type)) + (c.use_subgroups(plan.wg) ? "" : ".nosg");
  FirstFailure built;
  if (plan.chained_path()) {
    // REJECTED_ORDER of the Partition kernel: 1 writes the rejected elements reversed, in place.
    built.keep(plan.chained,
               get_select_kernel(c, plan.name, {.kernel = kChainedKernels[plan.partition][state64_enabled(c)],
                                                .variant = variant, .workgroup_size = plan.wg, .items = plan.items,
                                                .uses_subgroups = true, .rejected_order = plan.reversed() ? 1u : 0u}));
    if (plan.spills())
      built.keep(plan.copy_rejected,
                 get_select_kernel(c, plan.name, {.kernel = kernel_name("select/copy_rejected"),
                                                  .variant = plan.out_elem == 8 ? "u64" : "u32",
                                                  .workgroup_size = kCopyWorkgroup, .items = kCopyItems,
                                                  .uses_subgroups = false}));
  } else {
    built.keep(plan.tile_count,
               get_select_kernel(c, plan.name, {.kernel = kernel_name("select/tile_count"), .variant = variant,
                                                .workgroup_size = plan.wg, .items = plan.items,
                                                .uses_subgroups = true}));
    auto counts_variant = variant_name(c, DataType::u32, std::nullopt, true, kScanCountsWorkgroup);
    if (!counts_variant) return counts_variant.error();
    built.keep(plan.scan_counts, get_select_kernel(c, plan.name, {.kernel = kernel_name("select/scan_counts"),
                                                                  .variant = counts_variant.value(),
                                                                  .workgroup_size = kScanCountsWorkgroup,
                                                                  .items = 1, .uses_subgroups = true}));
    built.keep(plan.scatter,
               get_select_kernel(c, plan.name, {.kernel = kernel_name("select/scatter"), .variant = variant,
                                                .workgroup_size = plan.wg, .items = plan.items,
                                                .uses_subgroups = true}));
  }
  built.keep(plan.args, indirect_args_kernel(c, plan.name));
  return std::move(built.result);
}

// Lays out scratch for max_count: chained = [tile state][Partition in input order: spill][indirect args];
// count_scan_scatter = [tile counts][indirect args].
void lay_out_select_scratch(const ContextImpl& c, SelectPlan& plan) {
  plan.scratch_align = binding_alignment(c);
  const VkDeviceSize align = plan.scratch_align;
  if (plan.chained_path()) {
    plan.state_bytes = state_region_bytes(plan, align);
    plan.spill_offset = plan.state_bytes;
    plan.spill_bytes = spill_region_bytes(plan, align);
    plan.indirect_offset = plan.spill_offset + plan.spill_bytes;
  } else {
    plan.counts_bytes = align_up(plan.max_tiles * 4, align);
    plan.indirect_offset = plan.counts_bytes;
  }
  plan.scratch_bytes = plan.indirect_offset + align_up(kIndirectRegionBytes, align);
}

// Validate the description, resolve the algorithm and tile, check them against the device, build the
// kernels, lay out scratch; the checks fire in that order.
Result<std::unique_ptr<SelectPlan>> create_plan(Context& context, const SelectDesc& desc, bool partition) {
  ContextImpl& c = context.impl();
  if (auto ok = check_select_desc(c, desc, partition); !ok) return ok.error();
  std::unique_ptr<SelectPlan> plan = resolve_select_policy(c, desc, partition);
  if (auto ok = check_select_limits(c, *plan); !ok) return ok.error();
  if (auto ok = build_select_kernels(c, *plan); !ok) return ok.error();
  lay_out_select_scratch(c, *plan);
  plan->descriptors = std::make_unique<DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return plan;
}

// A comparison predicate's comparand must be made for the plan's element type (Comparand::of).
Result<void> check_comparand(const SelectPlan& p, const char* call, const Comparand& comparand) {
  if (p.desc.predicate == SelectPredicate::flagged || !comparand.typed || comparand.type == p.desc.type) return {};
  return make_error(Status::invalid_argument, p.name, "::", call, ": the comparand was made for ",
                    to_string(comparand.type), " but the plan selects ", to_string(p.desc.type),
                    " elements; use Comparand::of() with a value of the plan's type");
}

Result<void> record_plan(const SelectPlan& p, VkCommandBuffer cmd, const SelectOperands& o, uint64_t count,
                         Comparand comparand) {
  if (count > p.desc.max_count)
    return make_error(Status::invalid_argument, p.name, "::record: count ", count, " exceeds max_count ",
                      p.desc.max_count);
  if (auto ok = check_arguments(p, "record", o, count, nullptr); !ok) return ok;
  if (auto ok = check_comparand(p, "record", comparand); !ok) return ok;
  std::vector<Pass> passes;
  PassBuilder(p, o, comparand, count).build(count, false, nullptr, passes);
  return record_passes(*p.context, *p.descriptors, cmd, passes, p.name, "record");
}

Result<void> record_plan_indirect(const SelectPlan& p, VkCommandBuffer cmd, const SelectOperands& o,
                                  const BufferRange& count_buffer, Comparand comparand) {
  const uint64_t max_n = p.desc.max_count;
  const uint64_t window = window_elements(*p.context, p.elem, p.tile_elements);
  if (auto ok = check_indirect_limits(*p.context, max_n, window, p.max_tiles, p.name); !ok) return ok;
  const std::string call = std::string(p.name) + "::record_indirect";
  if (auto ok = check_count_buffer(count_buffer, call.c_str()); !ok) return ok;
  if (auto ok = check_arguments(p, "record_indirect", o, max_n, &count_buffer); !ok) return ok;
  if (auto ok = check_comparand(p, "record_indirect", comparand); !ok) return ok;
  std::vector<Pass> passes;
  PassBuilder(p, o, comparand, max_n).build(max_n, true, &count_buffer, passes);
  return record_passes(*p.context, *p.descriptors, cmd, passes, p.name, "record_indirect");
}

}  // namespace

}  // namespace detail

using detail::make_error;

Select::Select(std::unique_ptr<detail::SelectPlan> plan) : plan_(std::move(plan)) {}
Select::Select(Select&&) noexcept = default;
Select& Select::operator=(Select&&) noexcept = default;
Select::~Select() = default;

Result<Select> Select::create(Context& context, const SelectDesc& desc) {
  auto plan = detail::create_plan(context, desc, false);
  if (!plan) return std::move(plan).error();
  return Select(std::move(plan).value());
}
const SelectDesc& Select::desc() const { return plan_->desc; }
SelectAlgorithm Select::algorithm() const { return plan_->algorithm; }
ScratchRequirements Select::scratch_requirements() const {
  return {plan_->scratch_bytes, plan_->scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}
uint32_t Select::dispatch_count(uint64_t count) const { return plan_->dispatches(count); }
uint64_t Select::elements_per_tile() const { return plan_->tile_elements; }
Result<void> Select::record(VkCommandBuffer cmd, const SelectOperands& operands, uint64_t count,
                          Comparand comparand) const {
  return detail::record_plan(*plan_, cmd, operands, count, comparand);
}
Result<void> Select::record_indirect(VkCommandBuffer cmd, const SelectOperands& operands,
                                   const BufferRange& count_buffer, Comparand comparand) const {
  return detail::record_plan_indirect(*plan_, cmd, operands, count_buffer, comparand);
}
VkDeviceSize Select::statistics_offset() const { return 0; }
void Select::release_descriptor_sets() const { plan_->descriptors->release(); }

Partition::Partition(std::unique_ptr<detail::SelectPlan> plan) : plan_(std::move(plan)) {}
Partition::Partition(Partition&&) noexcept = default;
Partition& Partition::operator=(Partition&&) noexcept = default;
Partition::~Partition() = default;

Result<Partition> Partition::create(Context& context, const SelectDesc& desc) {
  auto plan = detail::create_plan(context, desc, true);
  if (!plan) return std::move(plan).error();
  return Partition(std::move(plan).value());
}
const SelectDesc& Partition::desc() const { return plan_->desc; }
SelectAlgorithm Partition::algorithm() const { return plan_->algorithm; }
ScratchRequirements Partition::scratch_requirements() const {
  return {plan_->scratch_bytes, plan_->scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}
uint32_t Partition::dispatch_count(uint64_t count) const { return plan_->dispatches(count); }
uint64_t Partition::elements_per_tile() const { return plan_->tile_elements; }
Result<void> Partition::record(VkCommandBuffer cmd, const SelectOperands& operands, uint64_t count,
                             Comparand comparand) const {
  return detail::record_plan(*plan_, cmd, operands, count, comparand);
}
Result<void> Partition::record_indirect(VkCommandBuffer cmd, const SelectOperands& operands,
                                      const BufferRange& count_buffer, Comparand comparand) const {
  return detail::record_plan_indirect(*plan_, cmd, operands, count_buffer, comparand);
}
VkDeviceSize Partition::statistics_offset() const { return 0; }
void Partition::release_descriptor_sets() const { plan_->descriptors->release(); }

}  // namespace vkprim
