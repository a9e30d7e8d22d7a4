// TopK: radix select over the composite key (ordered key, input index), after Alabi et al., "Fast k-selection
// algorithms for graphics processing units" (2012), in shaders/topk/select.comp; the k selected keys (and
// their indices) are then ordered: up to kRankMax by counting each one's rank among them (the rank pass, which
// also gathers the values), more by RadixSort and a gather of the values by index.
// A record: sample (32 workgroups: 8192 keys evenly spaced to scratch), threshold (one workgroup: the sample's key of
// the chosen rank), sieve (one read of the input: the keys at or below it to a short list), split (many workgroups: the
// list's first digit, the entries below its bucket appended, the bucket to a second list; the workgroup that finishes
// last then refines: radix select over that bucket, the rest of the k appended, unless the rank pass takes the split's
// direct list (sorted, k <= kRankMax: every entry up to the bucket's end); or the fallback's dispatch arguments);
// the fallback, dispatched indirectly with zero workgroups unless the refine found the list short of k or past its
// room: four (32-bit keys) or eight digit passes of the key over the input (each counts, and its last workgroup
// chooses the bucket), those after the bucket is decided returning at once, with the filter to the candidate list
// after the first (counting the second: no pass of its own); the tally (where the keys equal to the k-th key
// outnumber the rank left: their count per chunk of the input, in index order); and select (by those counts, the
// earliest of them); then the rank pass, or the sorts and the gather.
// record_segmented (the top k of each segment), a first version that sorts: shaders/topk/segments.comp copies
// the keys and values to scratch, the plan's SegmentedSort sorts each segment of the copy stably, and the same
// kernel's gather writes each segment's first min(k, length).
#include "vkprim/topk.hpp"

#include "vkprim/segmented_sort.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "barriers.hpp"
#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "indirect.hpp"
#include "plan_common.hpp"
#include "shader_groups.hpp"

namespace vkprim {
namespace detail {

namespace {

constexpr KernelName kSelectKernel = kernel_name("topk/select");
constexpr KernelName kSelectKernel64 = kernel_name("topk/select_k64");
static_assert(kSelectKernel.push_bytes() == 64 && kSelectKernel.bindings() == 8);
static_assert(kSelectKernel64.push_bytes() == 64 && kSelectKernel64.bindings() == 8);
// record_segmented's copy and gather (shaders/topk/segments.comp), by key width.
constexpr KernelName kSegmentsKernels[2] = {kernel_name("topk/segments"), kernel_name("topk/segments_k64")};
static_assert(kSegmentsKernels[0].push_bytes() == 64 && kSegmentsKernels[1].bindings() == 8);
enum : uint32_t { kSegmentsCopy = 0, kSegmentsGather = 1, kSegmentsPhases = 2 };  // segments.comp PHASE
constexpr uint32_t kSegmentsPairs = 1;                        // SEGMENTS_PAIRS
constexpr uint32_t kSegmentsIndirect = 2;                     // SEGMENTS_INDIRECT

// PHASE (shaders/topk/select.comp).
enum : uint32_t {
  kPhaseSample = 0, kPhaseCount = 1, kPhaseSelect = 2, kPhaseGather = 3, kPhaseFilter = 4, kPhaseSieve = 5,
  kPhaseThreshold = 6, kPhaseSplit = 7, kPhaseRank = 8, kPhaseTally = 9,
  kPhases = 10
};
// KEY_FLAGS bits (common/radix.glsl).
enum : uint32_t { kKeySigned = 1, kKeyFloat = 2, kKeyDescending = 4 };
// select.comp's ST_* words, the digit counts, the samples (SAMPLE_SLOTS ordered keys); then the lists.
constexpr uint32_t kSampleSlots = 8192;
constexpr uint32_t state_words_for(uint32_t key_bytes) { return 32 + 256 + kSampleSlots * (key_bytes / 4); }
constexpr uint32_t kSelectedWord = 8;       // ST_SELECTED: min(k, count), the sorts' count under record_indirect
static_assert(TopK::kPathWord == 12);       // ST_PATH
constexpr uint32_t kFlagIndirect = 1;       // TOPK_INDIRECT
constexpr uint32_t kFlagCandidates = 2;     // TOPK_CANDIDATES
constexpr uint32_t kFlagRanked = 4;         // TOPK_RANKED
constexpr uint32_t kFlagPairs = 8;          // TOPK_PAIRS
// The sorted output of at most kRankMax keys by the rank phase (select.comp RANK_MAX, RANK_LANES): each selected
// composite's rank counted among the selection by kRankLanes invocations, no sort; more keys: RadixSort.
constexpr uint32_t kRankMax = 1024;
constexpr uint32_t kRankLanes = 16;
// The rank list's room (select.comp RANK_UNION_MAX): the k selected, or the split's direct list (the entries below
// its bucket and those in it, when they fit: the rank pass keeps the k smallest, and no refine runs).
constexpr uint32_t kRankListEntries = 2048;
// The fallback's digits of the composite's key (high word, low word), most significant first: 32-bit keys, whose
// high word is 0, start at digit 4. Ties at the k-th key are then taken in index order (tally, select).
constexpr uint32_t kKeyDigits = 8;
constexpr uint32_t kMaxK = 65536;
constexpr uint32_t kNoCapacity = 0xFFFFFFFFu;  // the fallback's filter: its list has room for the count

// The sample path's choices (select.comp's SAMPLES, SAMPLE_SIGMAS, SAMPLE_SLACK mirror the first three).
// S = workgroup x 32 keys sampled evenly spaced (8192 at 256, in the threshold's local memory); mu = S k / n
// samples are expected below the k-th key, and the threshold is the sample of rank r = ceil(mu + 6 sqrt(mu) + 3)
// (1..S), so fewer than k keys fall at or below it only if r samples land below the k-th key: on an input in
// no adversarial order P(Bin(S, k/n) >= r) < 1e-8 at every k/n (mu^6/720 ~ 5e-9 at k = 1024 of 2^26). The keys
// at or below it number about r n / S (the sample's r-th order statistic: Gamma(r)/S of n): k = 1024 of 2^26,
// r = 6, ~48 k; k = 65536, r = 28, ~229 k. The lists hold C = 4 (r + 8) n / S at max_k and max_count (k and
// n at most those give fewer; P(Gamma(6) > 56) ~ 1e-18), at most max_count: more, or fewer than k, and the
// fallback runs. A larger sample narrows the list but slows the one-workgroup threshold pass that reads it
// (4 x 8192 samples, from local memory, measured slower on an H200).
struct SamplePolicy {
  uint32_t samples_per_invocation = 32;
  double sigmas = 6.0;
  double slack = 3.0;
  double capacity_factor = 4.0;
  double capacity_ranks = 8.0;
};
constexpr SamplePolicy kSample{};

// Tuning as data: the first row whose driver matches (0: any) gives the workgroup, the grid's cap of the
// grid-stride passes, and the workgroups per compute unit of their grid (one wave of resident workgroups; 0: as
// many as the compute unit's threads hold). NVIDIA: the sieve's registers leave room for 4 workgroups of 256
// per multiprocessor; a grid of 8 per multiprocessor runs it in two waves, measured slower on an H200
// (docs/PERFORMANCE.md).
struct TopKPolicy {
  VkDriverId driver;
  uint32_t workgroup_size;
  uint32_t max_groups;
  uint32_t groups_per_compute_unit;
};
constexpr TopKPolicy kPolicies[] = {
    {VK_DRIVER_ID_MESA_LLVMPIPE, 256, 64, 0},
    {VK_DRIVER_ID_NVIDIA_PROPRIETARY, 256, 2048, 4},
    {VkDriverId(0), 256, 2048, 0},
};

}  // namespace

struct TopKPlan {
  ContextLease context;
  TopKDesc desc;
  uint32_t wg = 256;
  uint64_t max_groups = 64;
  uint32_t key_flags = 0;
  uint32_t key_bytes = 4;
  std::array<const Kernel*, kPhases> phases{};
  // The sample path's two lists, of `capacity` entries each (at most max_count), after the state words; then the
  // rank list (kRankListEntries, sorted plans) from entry rank_base.
  uint32_t capacity = 0;
  uint32_t rank_base = 0;
  // The passes after the first digit read a candidate list after the state words (key words and index per
  // candidate, room for max_count) where state and list fit one binding; else every pass reads the input.
  bool candidates = false;
  uint32_t state_words = 0;
  // Sorted plans whose max_k exceeds kRankMax. Keys only: one sort of the keys. Pairs: the indices (u32, the keys
  // as values), then stably the keys (the indices as values), so equal keys end in index order whatever order the
  // selection appended them in.
  std::optional<RadixSort> by_index;
  std::optional<RadixSort> by_key;
  // Scratch: the state, the index list, the fallback's dispatch arguments (outside every binding of the passes
  // they dispatch, so that the barriers between those passes need not cover indirect reads), the sorts' scratch.
  VkDeviceSize index_offset = 0, args_offset = 0, sort_offset = 0, sort_bytes = 0, scratch_bytes = 0,
               scratch_align = 16;
  // record_segmented (desc.max_segments > 0): the copy and gather kernels, the SegmentedSort of the copy, and
  // their scratch (the copy's keys and values, the sort's scratch) from offset 0, beside the layout above.
  std::optional<SegmentedSort> segmented;
  std::array<const Kernel*, kSegmentsPhases> segments_phases{};
  VkDeviceSize copy_values_offset = 0, segmented_sort_offset = 0;
  std::unique_ptr<DescriptorSets> descriptors;

  // The split's grid over a list of up to `capacity` entries (select.comp SPLIT_ITEMS per invocation).
  uint64_t split_groups() const { return std::min(std::max<uint64_t>(1, ceil_div(capacity, uint64_t(wg) * 8)), max_groups); }
  uint64_t groups_for(uint64_t count) const { return std::min(std::max<uint64_t>(1, ceil_div(count, wg)), max_groups); }
  // A record selecting at most m keys orders them by the rank pass (TOPK_RANKED), not by the sorts and the gather.
  bool ranks(uint64_t m) const { return desc.sorted && m <= kRankMax; }
};

namespace {

Result<void> check_topk_desc(const ContextImpl& c, const TopKDesc& d) {
  if (int(d.key_type) < 0 || int(d.key_type) > int(DataType::f64))
    return make_error(Status::invalid_argument, "TopK::create: key_type ", int(d.key_type),
                      " is not supported (u32, i32, f32, u64, i64, f64)");
  if (d.value_size != 0 && d.value_size != 4)
    return make_error(Status::invalid_argument, "TopK::create: value_size ", d.value_size, " must be 0 or 4");
  if (int(d.order) < 0 || int(d.order) > int(SortOrder::descending))
    return make_error(Status::invalid_argument, "TopK::create: unknown order ", int(d.order));
  if (d.max_count == 0 || d.max_count > 0xffffffffull)
    return make_error(Status::invalid_argument, "TopK::create: max_count ", d.max_count,
                      " must be in 1..2^32-1 (input indices are u32)");
  if (d.max_k < 1 || d.max_k > kMaxK)
    return make_error(Status::invalid_argument, "TopK::create: max_k ", d.max_k, " must be in 1..65536");
  if (d.max_count > window_elements(c, size_of(d.key_type), 1))
    return make_error(Status::unsupported, "TopK::create: max_count ", d.max_count,
                      " keys exceed one storage-buffer binding (maxStorageBufferRange)");
  return {};
}

uint32_t key_flags_for(const TopKDesc& d) {
  const bool is_signed = d.key_type == DataType::i32 || d.key_type == DataType::i64;
  const bool is_float = d.key_type == DataType::f32 || d.key_type == DataType::f64;
  return (is_signed ? kKeySigned : 0u) | (is_float ? kKeyFloat : 0u) |
         (d.order == SortOrder::descending ? kKeyDescending : 0u);
}

// Every phase of `name` (select.comp, or segments.comp with key_flags 0) into `slots`.
template <size_t N>
Result<void> build_phases(ContextImpl& c, const TopKPlan& p, KernelName name, uint32_t key_flags,
                          std::array<const Kernel*, N>& slots) {
  for (uint32_t phase = 0; phase < N; ++phase) {
    KernelDesc kd{name};
    kd.plan = "TopK";
    kd.group = &kShaderGroup_topk;
    kd.variant = "default";
    kd.workgroup_size = p.wg;
    kd.spec.key_flags = key_flags;
    kd.spec.phase = phase;
    auto kernel = get_kernel(c, kd);
    if (!kernel) return std::move(kernel).error();
    slots[phase] = kernel.value();
  }
  return {};
}

Result<void> build_topk_kernels(ContextImpl& c, TopKPlan& p) {
  return build_phases(c, p, p.key_bytes == 8 ? kSelectKernel64 : kSelectKernel, p.key_flags, p.phases);
}

// A plan TopK records through (RadixSort, SegmentedSort) into `slot`; its error as TopK::create's.
template <class Plan, class Desc>
Result<void> emplace_plan(Context& context, const Desc& desc, std::optional<Plan>& slot) {
  auto plan = Plan::create(context, desc);
  if (!plan) return with_context(Result<void>(std::move(plan).error()), "TopK", "create");
  slot.emplace(std::move(plan).value());
  return {};
}

// The sorts that order a selection of more than kRankMax keys, over at most max_k (none for unsorted output).
Result<void> build_topk_sorts(Context& context, TopKPlan& p) {
  if (!p.desc.sorted || p.desc.max_k <= kRankMax) return {};
  SortDesc by_key;
  by_key.key_type = p.desc.key_type;
  by_key.order = p.desc.order;
  by_key.value_size = p.desc.value_size;
  by_key.max_count = p.desc.max_k;
  if (auto ok = emplace_plan(context, by_key, p.by_key); !ok) return ok;
  if (p.desc.value_size == 0) return {};
  SortDesc by_index;
  by_index.key_type = DataType::u32;
  by_index.value_size = size_of(p.desc.key_type);  // the keys ride along as the values
  by_index.max_count = p.desc.max_k;
  return emplace_plan(context, by_index, p.by_index);
}

// C of kSample's table: the room of each of the sample path's lists.
uint64_t sample_capacity(const TopKPlan& p) {
  const double n = double(p.desc.max_count), k = double(std::min<uint64_t>(p.desc.max_k, p.desc.max_count));
  const double taken = double(std::min<uint64_t>(uint64_t(p.wg) * kSample.samples_per_invocation, p.desc.max_count));
  const double mu = taken * k / n;
  const double rank = std::min(taken, std::ceil(mu + kSample.sigmas * std::sqrt(mu) + kSample.slack));
  const double room = std::ceil(kSample.capacity_factor * (rank + kSample.capacity_ranks) * n / taken);
  return std::min<uint64_t>(p.desc.max_count, uint64_t(room));
}

void lay_out_scratch(ContextImpl& c, TopKPlan& p) {
  ScratchRequirements sort = p.by_key ? p.by_key->scratch_requirements() : ScratchRequirements{0, 16, 0};
  if (p.by_index) {
    const ScratchRequirements other = p.by_index->scratch_requirements();
    sort.size = std::max(sort.size, other.size);
    sort.alignment = std::max(sort.alignment, other.alignment);
  }
  p.scratch_align = std::max<VkDeviceSize>({16, binding_alignment(c), sort.alignment});
  // The lists: the sample path's two, or where the fallback's fits one binding with the state, its one (room for
  // max_count), in the same words.
  const uint64_t entry_words = p.key_bytes / 4 + 1;
  const uint64_t binding_words = (c.caps.max_storage_buffer_range - binding_alignment(c)) / 4;
  const uint32_t fixed_words = state_words_for(p.key_bytes);
  p.candidates = fixed_words + p.desc.max_count * entry_words <= binding_words;
  p.capacity = uint32_t(std::min<uint64_t>(sample_capacity(p), (binding_words - fixed_words) / (2 * entry_words)));
  const uint64_t list_entries = std::max<uint64_t>(2 * uint64_t(p.capacity), p.candidates ? p.desc.max_count : 0);
  p.rank_base = uint32_t(list_entries);
  const uint64_t rank_entries = p.desc.sorted ? kRankListEntries : 0;
  p.state_words = uint32_t(fixed_words + (list_entries + rank_entries) * entry_words);
  p.index_offset = align_up(VkDeviceSize(p.state_words) * 4, p.scratch_align);
  p.args_offset = align_up(p.index_offset + VkDeviceSize(p.desc.max_k) * 4, p.scratch_align);
  p.sort_offset = align_up(p.args_offset + kIndirectEntryBytes, p.scratch_align);
  p.sort_bytes = sort.size;
  p.scratch_bytes = p.sort_offset + std::max<VkDeviceSize>(sort.size, 16);
}

// record_segmented's kernels and SegmentedSort plan, and its scratch: the copy of max_count keys (and values) and
// the sort's scratch; scratch_bytes grows to cover it.
Result<void> build_topk_segmented(Context& context, TopKPlan& p) {
  if (p.desc.max_segments == 0) return {};
  if (auto ok = build_phases(context.impl(), p, kSegmentsKernels[p.key_bytes == 8 ? 1 : 0], 0, p.segments_phases); !ok)
    return ok;
  SegmentedSortDesc sd;
  sd.key_type = p.desc.key_type;
  sd.value_size = p.desc.value_size;
  sd.order = p.desc.order;
  sd.max_count = p.desc.max_count;
  sd.max_segments = p.desc.max_segments;
  if (auto ok = emplace_plan(context, sd, p.segmented); !ok) return ok;
  const ScratchRequirements need = p.segmented->scratch_requirements();
  p.scratch_align = std::max(p.scratch_align, need.alignment);
  p.copy_values_offset = align_up(p.desc.max_count * p.key_bytes, p.scratch_align);
  p.segmented_sort_offset = align_up(p.copy_values_offset + p.desc.max_count * p.desc.value_size, p.scratch_align);
  p.scratch_bytes = std::max(p.scratch_bytes, p.segmented_sort_offset + need.size);
  return {};
}

}  // namespace
}  // namespace detail

using detail::make_error;

TopK::TopK(std::unique_ptr<detail::TopKPlan> plan) : plan_(std::move(plan)) {}
TopK::TopK(TopK&&) noexcept = default;
TopK& TopK::operator=(TopK&&) noexcept = default;
TopK::~TopK() = default;

// Validate, resolve the policy, build the select kernels and the sorts, lay out scratch.
Result<TopK> TopK::create(Context& context, const TopKDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_topk_desc(c, desc); !ok) return ok.error();
  auto plan = std::make_unique<detail::TopKPlan>();
  plan->context = &c;
  plan->desc = desc;
  const detail::TopKPolicy& policy = detail::policy_row(detail::kPolicies, c.caps.driver_id);
  plan->wg = policy.workgroup_size;
  // The samples' slots (select.comp SAMPLE_SLOTS) hold WG_SIZE * SAMPLES.
  static_assert(std::all_of(std::begin(detail::kPolicies), std::end(detail::kPolicies), [](const detail::TopKPolicy& p) {
    return p.workgroup_size * detail::kSample.samples_per_invocation <= detail::kSampleSlots;
  }));
  plan->max_groups = policy.max_groups;
  // The grid-stride passes: at most one wave of resident workgroups where the driver reports its compute units
  // (as Reduce), so that each workgroup's fixed costs (its counts' clear and flush) are paid once per slot.
  if (c.caps.compute_units && c.caps.threads_per_compute_unit >= plan->wg) {
    const uint32_t resident = policy.groups_per_compute_unit ? policy.groups_per_compute_unit
                                                              : c.caps.threads_per_compute_unit / plan->wg;
    plan->max_groups = std::min<uint64_t>(plan->max_groups, uint64_t(c.caps.compute_units) * resident);
  }
  plan->key_flags = detail::key_flags_for(desc);
  plan->key_bytes = size_of(desc.key_type);
  if (auto ok = detail::build_topk_kernels(c, *plan); !ok) return ok.error();
  if (auto ok = detail::build_topk_sorts(context, *plan); !ok) return ok.error();
  detail::lay_out_scratch(c, *plan);
  if (auto ok = detail::build_topk_segmented(context, *plan); !ok) return ok.error();
  plan->descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return TopK(std::move(plan));
}

const TopKDesc& TopK::desc() const { return plan_->desc; }
ScratchRequirements TopK::scratch_requirements() const {
  return {plan_->scratch_bytes, plan_->scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}
void TopK::release_descriptor_sets() const {
  plan_->descriptors->release();
  if (plan_->by_key) plan_->by_key->release_descriptor_sets();
  if (plan_->by_index) plan_->by_index->release_descriptor_sets();
  if (plan_->segmented) plan_->segmented->release_descriptor_sets();
}

namespace detail {
namespace {

struct Operands {
  BufferRange keys, values, out_keys, out_values, scratch;
  const BufferRange* count_buffer = nullptr;  // record_indirect
  const BufferRange* k_buffer = nullptr;
};

BufferRange sub_range(const BufferRange& r, VkDeviceSize offset, VkDeviceSize bytes) {
  return {r.buffer, r.offset + offset, bytes};
}

// A range a record reads or writes: `bytes` of it, checked where required.
struct OperandRange {
  const char* what;
  BufferRange range;
  VkDeviceSize bytes;
  bool required;
};

// The checks every record shares: each range (null, misaligned, short), scratch, and the written ranges (the
// first three: out_keys, out_values, scratch) against every other.
template <size_t N>
Result<void> check_ranges(const TopKPlan& p, const char* call, const OperandRange (&ranges)[N]) {
  static_assert(N > 3);
  for (const auto& r : ranges)
    if (auto ok = check_range(r.range, r.bytes, 4, r.what, r.required); !ok) return with_context(ok, "TopK", call);
  const ScratchRequirements need{p.scratch_bytes, p.scratch_align, 0};
  if (auto ok = check_scratch(ranges[2].range, need, "TopK", call); !ok) return ok;
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = i + 1; j < N; ++j) {
      const auto& a = ranges[i];
      const auto& b = ranges[j];
      if (!a.required || !b.required || !overlaps(a.range, a.bytes, b.range, b.bytes)) continue;
      return make_error(Status::invalid_argument, "TopK::", call, ": ", a.what, " and ", b.what, " ranges overlap");
    }
  return {};
}

// Every buffer check of record (n input keys, m selected) and record_indirect (max_count, max_k).
Result<void> check_operands(const TopKPlan& p, const char* call, const Operands& o, uint64_t n, uint64_t m) {
  const bool pairs = p.desc.value_size != 0;
  const OperandRange ranges[] = {
      {"out_keys", o.out_keys, m * p.key_bytes, true},
      {"out_values", o.out_values, m * 4, pairs},
      {"scratch", o.scratch, p.scratch_bytes, true},
      {"keys", o.keys, n * p.key_bytes, true},
      {"values", o.values, n * 4, pairs},
      {"count_buffer", o.count_buffer ? *o.count_buffer : BufferRange{}, 4, o.count_buffer != nullptr},
      {"k_buffer", o.k_buffer ? *o.k_buffer : BufferRange{}, 4, o.k_buffer != nullptr}};
  return check_ranges(p, call, ranges);
}

// A pass of select.comp over n keys and k selected (record_indirect: the maxima, which the GPU's values are
// clamped to): every binding bound (unused ones to a range of the same plan, never read).
Pass select_pass(const TopKPlan& p, uint32_t phase, const Operands& o, uint64_t n, uint32_t k, uint32_t digit,
                 uint64_t groups, uint32_t capacity = 0) {
  ContextImpl& c = *p.context;
  const ElementBinding keys = bind_elements(c, o.keys, 0, n, p.key_bytes);
  const ElementBinding state =
      bind_elements(c, sub_range(o.scratch, 0, VkDeviceSize(p.state_words) * 4), 0, p.state_words, 4);
  const ElementBinding out = bind_elements(c, o.out_keys, 0, k, p.key_bytes);
  const ElementBinding index = bind_elements(c, sub_range(o.scratch, p.index_offset, VkDeviceSize(k) * 4), 0, k, 4);
  const bool pairs = p.desc.value_size != 0;
  const ElementBinding values = pairs ? bind_elements(c, o.values, 0, n, 4) : index;
  // The split's refine writes the fallback's dispatch arguments through binding 5 (it writes no values), a range
  // of scratch that no other pass binds.
  const ElementBinding out_values =
      phase == kPhaseSplit ? bind_elements(c, sub_range(o.scratch, p.args_offset, kIndirectEntryBytes), 0,
                                            kIndirectEntryBytes / 4, 4)
      : pairs              ? bind_elements(c, o.out_values, 0, k, 4)
                           : index;
  const bool indirect = o.count_buffer != nullptr;
  const bool ranked = p.ranks(k);
  const ElementBinding count = indirect ? bind_elements(c, *o.count_buffer, 0, 1, 4) : state;
  const ElementBinding kword = indirect ? bind_elements(c, *o.k_buffer, 0, 1, 4) : state;
  Pass pass;
  pass.kernel = p.phases[phase];
  pass.buffers = {keys.bound, state.bound, out.bound, index.bound, values.bound, out_values.bound, count.bound,
                  kword.bound};
  const uint32_t flags = (indirect ? kFlagIndirect : 0u) | (p.candidates ? kFlagCandidates : 0u) |
                         (ranked ? kFlagRanked : 0u) | (pairs ? kFlagPairs : 0u);
  const std::array<uint32_t, 15> push = {uint32_t(n),      k,           digit,
                                         uint32_t(groups), keys.shift,  out.shift,
                                         index.shift,      values.shift, out_values.shift,
                                         flags,            count.shift, kword.shift,
                                         capacity,         0,           p.rank_base};
  std::copy(push.begin(), push.end(), pass.push.begin());
  pass.groups = groups;
  static constexpr const char* kNames[] = {"sample", "count",     "select", "gather", "filter",
                                           "sieve",  "threshold", "split",  "rank",   "tally"};
  static_assert(std::size(kNames) == kPhases);
  // Appended, not " " + to_string(): GCC 12 warns (-Wrestrict) on that concatenation, a false positive.
  pass.label.append("vkprim topk/").append(kNames[phase]);
  if (phase == kPhaseCount) pass.label.append(" ").append(std::to_string(digit));
  return pass;
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

// A fallback pass: dispatched from the arguments the refine writes (zero workgroups on the sample path).
Pass fallback_pass(const TopKPlan& p, uint32_t phase, const Operands& o, uint64_t n, uint32_t k, uint32_t digit,
                   uint64_t groups, uint32_t capacity = 0) {
  Pass pass = select_pass(p, phase, o, n, k, digit, groups, capacity);
  pass.indirect_entry = 0;
  // No binding of these passes covers the arguments (written by the refine only): compute-to-compute barriers
  // between them.
  pass.indirect_region = {o.scratch.buffer, o.scratch.offset + p.args_offset, kIndirectEntryBytes};
  return pass;
}

// The passes and sorts of a record (m: the selected keys, with `indirect` the most: max_k) once the operands are
// checked: sample, threshold, sieve, split (and refine); the fallback's digit passes, filter and select; sorted
// output of at most kRankMax keys: the rank pass; else the sorts in place on the selection (their scratch after the
// state and the index list, their count the GPU's min(k, count) under record_indirect) and the gather.
Result<void> record_topk(const TopKPlan& p, VkCommandBuffer cmd, const Operands& o, uint64_t count, uint32_t m,
                         const char* call) {
  ContextImpl& c = *p.context;
  const bool indirect = o.count_buffer != nullptr;
  const uint64_t groups = p.groups_for(count);
  std::vector<Pass> passes = {select_pass(p, kPhaseSample, o, count, m, 0, kSample.samples_per_invocation),
                              select_pass(p, kPhaseThreshold, o, count, m, 0, 1),
                              select_pass(p, kPhaseSieve, o, count, m, 0, groups, p.capacity),
                              select_pass(p, kPhaseSplit, o, count, m, 0, p.split_groups(), p.capacity)};
  passes.back().writes_indirect_args = true;
  passes.back().push[13] = uint32_t(groups);  // the fallback's grid, for its dispatch arguments
  const uint32_t first = p.key_bytes == 8 ? 0 : 4;
  for (uint32_t digit = first; digit < kKeyDigits; ++digit) {
    // With the candidate list, the filter after the first digit also counts the second (no pass of its own).
    if (p.candidates && digit == first + 1) {
      passes.push_back(fallback_pass(p, kPhaseFilter, o, count, m, digit, groups, kNoCapacity));
      continue;
    }
    passes.push_back(fallback_pass(p, kPhaseCount, o, count, m, digit, groups));
  }
  passes.push_back(fallback_pass(p, kPhaseTally, o, count, m, 0, groups));
  passes.push_back(fallback_pass(p, kPhaseSelect, o, count, m, 0, groups));
  if (p.ranks(m))  // no sorts, no gather
    passes.push_back(select_pass(p, kPhaseRank, o, count, m, 0, kRankListEntries / (p.wg / kRankLanes)));
  if (auto ok = record_passes(c, *p.descriptors, cmd, passes, "TopK", call); !ok) return ok;
  if (p.ranks(m)) return {};
  const BufferRange index = sub_range(o.scratch, p.index_offset, VkDeviceSize(m) * 4);
  const BufferRange sort_scratch = sub_range(o.scratch, p.sort_offset, p.sort_bytes);
  const BufferRange selected = sub_range(o.out_keys, 0, VkDeviceSize(m) * p.key_bytes);
  const BufferRange sort_count = sub_range(o.scratch, kSelectedWord * 4, 4);
  auto sort = [&](const RadixSort& plan, const BufferRange& keys, const BufferRange& values) {
    compute_to_fill_barrier(c, cmd);
    return with_context(indirect ? plan.record_indirect(cmd, keys, values, sort_count, sort_scratch)
                                 : plan.record(cmd, keys, values, m, sort_scratch),
                        "TopK", call);
  };
  if (p.by_index)
    if (auto ok = sort(*p.by_index, index, selected); !ok) return ok;
  if (p.by_key)
    if (auto ok = sort(*p.by_key, selected, p.by_index ? index : BufferRange{}); !ok) return ok;
  if (p.desc.value_size == 0) return {};
  compute_to_compute_barrier(c, cmd);
  const std::vector<Pass> gather = {select_pass(p, kPhaseGather, o, count, m, 0, ceil_div(m, p.wg))};
  return record_passes(c, *p.descriptors, cmd, gather, "TopK", call);
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

// record_segmented's ranges (and record_segmented_indirect's count).
struct SegmentedOperands {
  BufferRange keys, values, begin, end, out_keys, out_values, scratch;
  const BufferRange* segment_count = nullptr;
};

// The keys record_segmented copies: the keys range's elements (VK_WHOLE_SIZE: max_count), at most max_count.
uint64_t segmented_keys(const TopKPlan& p, const BufferRange& keys) {
  if (keys.size == VK_WHOLE_SIZE) return p.desc.max_count;
  return std::min<uint64_t>(p.desc.max_count, keys.size / p.key_bytes);
}

// Every check of record_segmented over n keys (at least one) and `segments` segments of k slots
// (record_segmented_indirect: max_segments, and the count's word).
Result<void> check_segmented(const TopKPlan& p, const char* name, const SegmentedOperands& o, uint64_t n,
                             uint64_t segments, uint32_t k) {
  const std::string call = std::string("TopK::") + name;
  if (!p.segmented)
    return make_error(Status::invalid_argument, call, ": the plan was created with max_segments 0 (no batched records)");
  if (segments > p.desc.max_segments)
    return make_error(Status::invalid_argument, call, ": segments ", segments, " exceeds max_segments ",
                      p.desc.max_segments);
  if (k > p.desc.max_k) return make_error(Status::invalid_argument, call, ": k ", k, " exceeds max_k ", p.desc.max_k);
  const uint64_t slots = segments * k;
  if (slots > window_elements(*p.context, p.key_bytes, 1))
    return make_error(Status::invalid_argument, call, ": ", segments, " segments of ", k, " slots exceed one ",
                      "storage-buffer binding of out_keys (maxStorageBufferRange)");
  const bool pairs = p.desc.value_size != 0;
  const uint64_t in = std::max<uint64_t>(n, 1);
  const OperandRange ranges[] = {{"out_keys", o.out_keys, slots * p.key_bytes, true},
                                 {"out_values", o.out_values, slots * 4, pairs},
                                 {"scratch", o.scratch, p.scratch_bytes, true},
                                 {"keys", o.keys, in * p.key_bytes, true},
                                 {"values", o.values, in * 4, pairs},
                                 {"begin_offsets", o.begin, segments * 4, true},
                                 {"end_offsets", o.end, segments * 4, true},
                                 {"segment_count", o.segment_count ? *o.segment_count : BufferRange{}, 4,
                                  o.segment_count != nullptr}};
  return check_ranges(p, name, ranges);
}

// A pass of segments.comp: the copy of keys[0..n) (and values) to scratch, or the gather of each segment's
// first min(k, length) sorted keys. Unused bindings are bound to a range of the same pass, never read.
Pass segments_pass(const TopKPlan& p, uint32_t phase, const SegmentedOperands& o, uint64_t n, uint64_t segments,
                   uint32_t k) {
  ContextImpl& c = *p.context;
  const bool pairs = p.desc.value_size != 0;
  const uint64_t slots = std::max<uint64_t>(segments * k, 1);
  const ElementBinding keys = bind_elements(c, o.keys, 0, n, p.key_bytes);
  const ElementBinding values = pairs ? bind_elements(c, o.values, 0, n, 4) : keys;
  const ElementBinding copy = bind_elements(c, sub_range(o.scratch, 0, n * p.key_bytes), 0, n, p.key_bytes);
  const ElementBinding copy_values =
      pairs ? bind_elements(c, sub_range(o.scratch, p.copy_values_offset, n * 4), 0, n, 4) : copy;
  const ElementBinding begin = bind_elements(c, o.begin, 0, std::max<uint64_t>(segments, 1), 4);
  const ElementBinding end = bind_elements(c, o.end, 0, std::max<uint64_t>(segments, 1), 4);
  const ElementBinding out = bind_elements(c, o.out_keys, 0, slots, p.key_bytes);
  const ElementBinding out_values = pairs ? bind_elements(c, o.out_values, 0, slots, 4) : out;
  const uint64_t seg_groups = ceil_div(uint64_t(std::max(k, 1u)), p.wg);
  const uint64_t groups = phase == kSegmentsCopy ? ceil_div(n, p.wg) : segments * seg_groups;
  // The gather reads no values: under record_segmented_indirect binding 1 holds the segment count instead.
  const bool indirect = phase == kSegmentsGather && o.segment_count;
  const ElementBinding values_or_count = indirect ? bind_elements(c, *o.segment_count, 0, 1, 4) : values;
  const uint32_t flags = (pairs ? kSegmentsPairs : 0u) | (indirect ? kSegmentsIndirect : 0u);
  Pass pass;
  pass.kernel = p.segments_phases[phase];
  pass.buffers = {keys.bound, values_or_count.bound, copy.bound, copy_values.bound, begin.bound, end.bound, out.bound,
                  out_values.bound};
  const std::array<uint32_t, 14> push = {uint32_t(n),      uint32_t(segments), k,
                                         uint32_t(groups), uint32_t(seg_groups), flags,
                                         keys.shift,       values_or_count.shift,       copy.shift,
                                         copy_values.shift, begin.shift,       end.shift,
                                         out.shift,        out_values.shift};
  std::copy(push.begin(), push.end(), pass.push.begin());
  pass.groups = groups;
  pass.label = phase == kSegmentsCopy ? "vkprim topk/segments copy" : "vkprim topk/segments gather";
  return pass;
}

// The copy, the segmented sort of the copy (its scratch after the copy's keys and values), the gather.
// segments: record_segmented_indirect's max_segments, the GPU's count clamped to it.
Result<void> record_segmented_topk(const TopKPlan& p, VkCommandBuffer cmd, const SegmentedOperands& o, uint64_t n,
                                   uint64_t segments, uint32_t k, const char* call) {
  ContextImpl& c = *p.context;
  const bool pairs = p.desc.value_size != 0;
  const std::vector<Pass> copy = {segments_pass(p, kSegmentsCopy, o, n, segments, k)};
  if (auto ok = record_passes(c, *p.descriptors, cmd, copy, "TopK", call); !ok) return ok;
  compute_to_fill_barrier(c, cmd);  // the sort clears its scratch with vkCmdFillBuffer
  const BufferRange copy_keys = sub_range(o.scratch, 0, n * p.key_bytes);
  const BufferRange copy_values = pairs ? sub_range(o.scratch, p.copy_values_offset, n * 4) : BufferRange{};
  const BufferRange sort_scratch =
      sub_range(o.scratch, p.segmented_sort_offset, p.segmented->scratch_requirements().size);
  const Result<void> sorted =
      o.segment_count
          ? p.segmented->record_indirect(cmd, copy_keys, copy_values, o.begin, o.end, *o.segment_count, sort_scratch)
          : p.segmented->record(cmd, copy_keys, copy_values, o.begin, o.end, segments, sort_scratch);
  if (!sorted) return with_context(sorted, "TopK", call);
  compute_to_compute_barrier(c, cmd);
  const std::vector<Pass> gather = {segments_pass(p, kSegmentsGather, o, n, segments, k)};
  return record_passes(c, *p.descriptors, cmd, gather, "TopK", call);
}

}  // namespace
}  // namespace detail

Result<void> TopK::record_segmented(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                    const BufferRange& begin_offsets, const BufferRange& end_offsets,
                                    uint64_t segments, uint32_t k, const BufferRange& out_keys,
                                    const BufferRange& out_values, const BufferRange& scratch) const {
  const detail::TopKPlan& p = *plan_;
  const detail::SegmentedOperands o{keys, values, begin_offsets, end_offsets, out_keys, out_values, scratch};
  const uint64_t n = detail::segmented_keys(p, keys);
  if (auto ok = detail::check_segmented(p, "record_segmented", o, n, segments, k); !ok) return ok;
  if (segments == 0 || k == 0 || n == 0) return {};
  return detail::record_segmented_topk(p, cmd, o, n, segments, k, "record_segmented");
}

Result<void> TopK::record_segmented_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                             const BufferRange& begin_offsets, const BufferRange& end_offsets,
                                             const BufferRange& segment_count, uint32_t k,
                                             const BufferRange& out_keys, const BufferRange& out_values,
                                             const BufferRange& scratch) const {
  const detail::TopKPlan& p = *plan_;
  if (auto ok = detail::check_count_buffer(segment_count, "TopK::record_segmented_indirect"); !ok) return ok;
  const detail::SegmentedOperands o{keys, values, begin_offsets, end_offsets, out_keys, out_values, scratch,
                                    &segment_count};
  const uint64_t n = detail::segmented_keys(p, keys);
  const uint64_t segments = p.desc.max_segments;
  if (auto ok = detail::check_segmented(p, "record_segmented_indirect", o, n, segments, k); !ok) return ok;
  if (k == 0) return {};
  return detail::record_segmented_topk(p, cmd, o, n, segments, k, "record_segmented_indirect");
}

Result<void> TopK::record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values, uint64_t count,
                          uint32_t k, const BufferRange& out_keys, const BufferRange& out_values,
                          const BufferRange& scratch) const {
  const detail::TopKPlan& p = *plan_;
  if (count > p.desc.max_count)
    return make_error(Status::invalid_argument, "TopK::record: count ", count, " exceeds max_count ", p.desc.max_count);
  if (k > p.desc.max_k)
    return make_error(Status::invalid_argument, "TopK::record: k ", k, " exceeds max_k ", p.desc.max_k);
  const uint32_t m = uint32_t(std::min<uint64_t>(k, count));
  const detail::Operands o{keys, values, out_keys, out_values, scratch};
  if (auto ok = detail::check_operands(p, "record", o, count, m); !ok) return ok;
  if (m == 0) return {};
  return detail::record_topk(p, cmd, o, count, m, "record");
}

Result<void> TopK::record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                   const BufferRange& count_buffer, const BufferRange& k_buffer,
                                   const BufferRange& out_keys, const BufferRange& out_values,
                                   const BufferRange& scratch) const {
  const detail::TopKPlan& p = *plan_;
  if (auto ok = detail::check_count_buffer(count_buffer, "TopK::record_indirect"); !ok) return ok;
  if (auto ok = detail::check_count_buffer(k_buffer, "TopK::record_indirect (k)"); !ok) return ok;
  const detail::Operands o{keys, values, out_keys, out_values, scratch, &count_buffer, &k_buffer};
  if (auto ok = detail::check_operands(p, "record_indirect", o, p.desc.max_count, p.desc.max_k); !ok) return ok;
  return detail::record_topk(p, cmd, o, p.desc.max_count, p.desc.max_k, "record_indirect");
}

}  // namespace vkprim
