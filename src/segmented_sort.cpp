// SegmentedSort: a stable radix sort of every segment of the keys, in place, the strategy chosen per segment on
// the GPU by its length, after CUB's DeviceSegmentedSort size classes (small segments many to a workgroup,
// medium ones one workgroup each, large ones over many workgroups):
//   classify   one invocation per segment lists it in scratch: small ones packed into batches, medium ones in
//              the medium list, large ones with a run of tiles (shaders/segmented_sort/classify.comp); a
//              second dispatch of it writes the later passes' dispatch arguments from the list counts;
//   tile       one workgroup per batch: the block-wide radix sort of RadixSort's one-workgroup sort (Merrill &
//              Grimshaw, common/radix_block.glsl) over every digit pass, then one pass over the segments' slots;
//   large      onesweep (Adinets & Merrill, one chain of tiles per segment): a histogram pass counting every
//              digit pass of each tile at once and a scan of them per segment, then per digit pass one chained
//              pass (decoupled look-back within the segment, with fallback; shaders/segmented_sort/chained.comp);
//              or reduce_then_scan (Merrill & Grimshaw, one sort per segment): per digit pass an upsweep
//              (digit counts per tile), a scan of each segment's digit x tile table and a downsweep (the
//              stable in-tile rank and scatter of common/radix.glsl). Either ping-pongs through scratch; a
//              segment of one tile ranks itself whole in the last pass (chained or downsweep); an odd number of
//              digit passes ends with a copy back;
//   medium     per digit pass the downsweep at the medium tile, a workgroup per segment ranking it whole,
//              through the same scratch (and copy back).
// Every pass after classify is dispatched indirectly from arguments written on the GPU.
//
// Scratch layout (each part at a binding-aligned offset):
//   meta: 16 header words (list counts), the member list (max_segments), the batch list (2 x max_segments),
//         the medium list (2 x max_segments: each entry a segment's bounds, where max_count allows medium or
//         large segments; the one-tile large segments from its end), the large list (4 words per entry), the
//         tile owners and the digit table (256 words per tile: the tile states under onesweep), then under
//         onesweep each tile's digit counts and each large segment's prefixes (256 words per digit pass);
//   the dispatch arguments: 5 entries of 8 words, outside meta, so that only the barrier after the pass that
//         writes them covers indirect-command reads (common/segmented_sort.glsl);
//   the ping-pong keys and values (plans whose max_count allows medium or large segments), the
//   record_indirect region.
#include "vkprim/segmented_sort.hpp"

#include <algorithm>
#include <array>
#include <iterator>
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

constexpr const char* kPlan = "SegmentedSort";
constexpr uint32_t kDigits = 256;
constexpr uint64_t kMaxSegSortCount = (uint64_t(1) << 30) - 1;  // positions stay below 2^30 (common/radix.glsl)
constexpr uint32_t kClassifyWorkgroup = 256;   // classify.comp: s_first per workgroup, 256 x 2048 weights < 2^20
constexpr uint32_t kScanWorkgroup = kDigits;   // scan.comp: one invocation per digit
constexpr uint32_t kMaxSlots = 255;            // segments per batch (common/segmented_sort.glsl, SEG_MAX_SLOTS)
constexpr uint32_t kMaxSmall = 2048;           // the classify scan's weight field (20 bits over 256 segments)

// The header of meta and the dispatch entries (common/segmented_sort.glsl).
constexpr uint32_t kHeaderWords = 16;
constexpr uint32_t kArgsWords = 5 * 8;
constexpr uint32_t kListsWord = kHeaderWords;
enum : uint32_t { kEntryBatches = 0, kEntryTiles = 1, kEntryLarge = 2, kEntryMedium = 3, kEntryDownsweep = 4 };
enum : uint32_t { kFixed = 1u, kIndirect = 2u, kArgs = 4u, kCopy = 8u, kMedium = 16u, kChained = 32u };
// Key transform bits (KEY_FLAGS of common/radix.glsl).
enum : uint32_t { kSigned = 1u, kFloat = 2u, kDescending = 4u };

// The kernels, by key width (32, 64) and payload (none, 4, 8 bytes).
constexpr KernelName kClassifyKernel = kernel_name("segmented_sort/classify");
constexpr KernelName kScanKernel = kernel_name("segmented_sort/scan");
constexpr KernelName kUpsweepKernels[2] = {kernel_name("segmented_sort/upsweep_k32"),
                                           kernel_name("segmented_sort/upsweep_k64")};
constexpr KernelName kTileKernels[2][3] = {
    {kernel_name("segmented_sort/tile_k32"), kernel_name("segmented_sort/tile_k32_v32"),
     kernel_name("segmented_sort/tile_k32_v64")},
    {kernel_name("segmented_sort/tile_k64"), kernel_name("segmented_sort/tile_k64_v32"),
     kernel_name("segmented_sort/tile_k64_v64")}};
constexpr KernelName kHistogramKernels[2] = {kernel_name("segmented_sort/histogram_k32"),
                                             kernel_name("segmented_sort/histogram_k64")};
constexpr KernelName kChainedKernels[2][3] = {
    {kernel_name("segmented_sort/chained_k32"), kernel_name("segmented_sort/chained_k32_v32"),
     kernel_name("segmented_sort/chained_k32_v64")},
    {kernel_name("segmented_sort/chained_k64"), kernel_name("segmented_sort/chained_k64_v32"),
     kernel_name("segmented_sort/chained_k64_v64")}};
constexpr KernelName kDownsweepKernels[2][3] = {
    {kernel_name("segmented_sort/downsweep_k32"), kernel_name("segmented_sort/downsweep_k32_v32"),
     kernel_name("segmented_sort/downsweep_k32_v64")},
    {kernel_name("segmented_sort/downsweep_k64"), kernel_name("segmented_sort/downsweep_k64_v32"),
     kernel_name("segmented_sort/downsweep_k64_v64")}};
// The push constants: common/radix.glsl's 12 words, then common/segmented_sort.glsl's 20 (128 bytes, the
// least maxPushConstantsSize a device may have).
constexpr uint32_t kSortWords = 12, kPushWords = 32;
static_assert(kClassifyKernel.push_bytes() == kPushWords * 4 && kTileKernels[1][2].push_bytes() == kPushWords * 4);

// Size classes and tiles per device class: the first row whose `cpu` matches applies. A batch is one block
// tile of block_wg x block_items keys, a medium segment one medium tile of medium_wg x medium_items, a longer
// one up to the block tile a batch of its own, and large segments go in tiles of large_wg x large_items.
// small_max is at most half the block tile (a batch then always holds its segments), medium_max 0 means the
// medium tile. chained_large: the large segments take onesweep where the device has the memory model.
struct SegmentedSortPolicy {
  bool cpu;
  uint32_t block_wg, block_items;
  uint32_t small_max, medium_max;
  uint32_t medium_wg, medium_items;
  uint32_t large_wg, large_items;
  bool chained_large;
};
constexpr SegmentedSortPolicy kSegmentedSortPolicy[] = {
    // CPU drivers (lavapipe): tiles of 1024 keys, so that tests reach every class with a few thousand keys and
    // no workgroup's loops come near llvmpipe's 65535 iterations (docs/ALGORITHMS.md, "Loop budget"); large
    // segments by reduce_then_scan (llvmpipe ran the chained passes 4x slower).
    {true, 256, 4, 128, 0, 256, 4, 256, 4, false},
    // GPUs (H200, docs/PERFORMANCE.md): batches in RadixSort's one-workgroup tile 256 x 8, small segments up to
    // 256 keys (as one-tile segments in 256 x 1 or 256 x 2 tiles they sorted 1.4x slower); medium ones up to
    // 1024 keys in tiles of 256 x 4 (2.2x faster than in a batch of their own); up to 2048 a batch of their
    // own (1.3x faster than one half-filled large tile); large tiles of RadixSort's reduce_then_scan shape
    // 512 x 8 (512 x 16 slower at 4096 and 65536 keys per segment), by onesweep (docs/PERFORMANCE.md).
    {false, 256, 8, 256, 0, 256, 4, 512, 8, true},
};

const SegmentedSortPolicy& segmented_sort_policy(const Capabilities& caps) {
  const bool cpu = caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  for (const SegmentedSortPolicy& p : kSegmentedSortPolicy)
    if (p.cpu == cpu) return p;
  return kSegmentedSortPolicy[std::size(kSegmentedSortPolicy) - 1];
}

}  // namespace

struct SegmentedSortPlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  SegmentedSortDesc desc;
  SegmentedSortThresholds thresholds{};
  uint32_t key_bytes = 4, value_bytes = 0, key_flags = 0;
  uint32_t begin_bit = 0, end_bit = 32, passes = 4;
  uint32_t block_wg = 256, block_items = 4, block_sg = 0;  // block_sg: ranking subgroup, 0 the emulation
  uint32_t medium_wg = 256, medium_items = 4, medium_sg = 0;
  uint32_t large_wg = 256, large_items = 4, large_sg = 0;
  uint64_t block_tile = 1024, medium_tile = 1024, large_tile = 1024;
  uint64_t large_above = 1024;  // segments longer than max(medium_max, block_tile) are large
  uint32_t batch_span = 1, min_weight = 1;
  bool medium = false;  // max_count allows medium segments: the medium passes, their list and kernel
  bool large = false;   // max_count allows large segments: the large passes, their scratch and kernels
  bool chained = false;  // large segments by onesweep (histogram and chained kernels), else reduce_then_scan
  uint64_t max_large = 0, max_tiles = 0;
  const Kernel* classify = nullptr;
  const Kernel* tile = nullptr;
  const Kernel* upsweep = nullptr;
  const Kernel* scan = nullptr;
  const Kernel* downsweep = nullptr;
  const Kernel* histogram = nullptr;  // onesweep: the histogram pass
  const Kernel* chained_digit = nullptr;  // onesweep: the digit passes (and the copy back)
  const Kernel* medium_downsweep = nullptr;  // the downsweep at the medium tile
  const Kernel* args = nullptr;
  uint32_t member_list = 0, batch_list = 0, medium_list = 0, large_list = 0, owners = 0, table = 0;  // meta words
  VkDeviceSize align = 16, meta_bytes = 0, args_offset = 0, keys_offset = 0, keys_bytes = 0, values_offset = 0, values_bytes = 0;
  VkDeviceSize indirect_offset = 0, scratch_bytes = 0;
  std::unique_ptr<DescriptorSets> descriptors;
};

namespace {

Result<void> check_segmented_sort_desc(const ContextImpl& c, const SegmentedSortDesc& d) {
  constexpr const char* plan = "SegmentedSort::create";
  if (!known_type(d.key_type))
    return make_error(Status::invalid_argument, plan, ": unknown key type ", int(d.key_type));
  if (d.order != SortOrder::ascending && d.order != SortOrder::descending)
    return make_error(Status::invalid_argument, plan, ": unknown order ", int(d.order));
  if (int(d.large_algorithm) < 0 || int(d.large_algorithm) > int(SortAlgorithm::reduce_then_scan))
    return make_error(Status::invalid_argument, plan, ": unknown large_algorithm ", int(d.large_algorithm));
  if (d.value_size != 0 && d.value_size != 4 && d.value_size != 8)
    return make_error(Status::invalid_argument, plan, ": value_size ", d.value_size,
                      " must be 0 (keys only), 4 or 8 bytes");
  if (d.max_count == 0 || d.max_count > kMaxSegSortCount)
    return make_error(Status::invalid_argument, plan, ": max_count ", d.max_count, " must be in 1..2^30-1");
  if (d.max_segments == 0)
    return make_error(Status::invalid_argument, plan, ": max_segments 0; a plan sorts at least one segment");
  const uint32_t key_bits = 8 * size_of(d.key_type);
  const uint32_t end_bit = d.end_bit ? d.end_bit : key_bits;
  if (end_bit > key_bits || d.begin_bit >= end_bit)
    return make_error(Status::invalid_argument, plan, ": bits [", d.begin_bit, ", ", end_bit,
                      ") must satisfy begin_bit < end_bit <= ", key_bits, " for ", to_string(d.key_type), " keys");
  for (const auto& [tuning, name] : {std::pair{&d.tuning, "tuning"}, std::pair{&d.block_tuning, "block_tuning"},
                                     std::pair{&d.medium_tuning, "medium_tuning"}}) {
    if (auto ok = check_tuning(plan, *tuning, tune_workgroup_size | tune_items_per_thread); !ok) return ok.error();
    const uint32_t wg = tuning->workgroup_size;
    if (wg && wg != 256 && wg != 512 && wg != 1024)
      return make_error(Status::invalid_argument, plan, ": ", name, ".workgroup_size ", wg, " must be 256, 512 or 1024");
    if (tuning->items_per_thread > 16)
      return make_error(Status::invalid_argument, plan, ": ", name, ".items_per_thread ", tuning->items_per_thread,
                        " exceeds 16");
  }
  const SegmentedSortThresholds& t = d.thresholds;
  if (t.medium_max && t.medium_max < t.small_max)
    return make_error(Status::invalid_argument, plan, ": thresholds.medium_max ", t.medium_max,
                      " is below thresholds.small_max ", t.small_max);
  if (size_of(d.key_type) < 4)
    return make_error(Status::unsupported, plan, ": ", to_string(d.key_type),
                      " keys are not supported (RadixSort sorts them); SegmentedSort takes 32- and 64-bit keys");
  if (is_64bit(d.key_type) && !c.caps.has(feature_int64))
    return make_error(Status::unsupported, plan, ": ", to_string(d.key_type), " keys need shaderInt64, which the ",
                      "device lacks or the caller did not enable");
  if (d.large_algorithm == SortAlgorithm::onesweep && !c.caps.has(feature_memory_model))
    return make_error(Status::unsupported, plan, ": large_algorithm onesweep needs the vulkanMemoryModel and ",
                      "vulkanMemoryModelDeviceScope features, which the device lacks or the caller did not enable ",
                      "(device_requirements() lists them); use reduce_then_scan");
  return {};
}

// The tiles and size classes from the policy and the overrides; refuses tiles the device cannot run and
// thresholds outside what a batch holds.
Result<void> resolve_segmented_sort_policy(const ContextImpl& c, const SegmentedSortDesc& d, SegmentedSortPlan& p) {
  constexpr const char* plan = "SegmentedSort::create";
  const SegmentedSortPolicy& policy = segmented_sort_policy(c.caps);
  auto pick = [](uint32_t override_value, uint32_t policy_value) { return override_value ? override_value : policy_value; };
  p.block_wg = pick(d.block_tuning.workgroup_size, policy.block_wg);
  p.block_items = pick(d.block_tuning.items_per_thread, policy.block_items);
  p.medium_wg = pick(d.medium_tuning.workgroup_size, policy.medium_wg);
  p.medium_items = pick(d.medium_tuning.items_per_thread, policy.medium_items);
  p.large_wg = pick(d.tuning.workgroup_size, policy.large_wg);
  p.large_items = pick(d.tuning.items_per_thread, policy.large_items);
  p.block_tile = uint64_t(p.block_wg) * p.block_items;
  p.medium_tile = uint64_t(p.medium_wg) * p.medium_items;
  p.large_tile = uint64_t(p.large_wg) * p.large_items;
  p.block_sg = ranking_subgroup(c, p.block_wg);
  p.medium_sg = ranking_subgroup(c, p.medium_wg);
  p.large_sg = ranking_subgroup(c, p.large_wg);
  p.chained = d.large_algorithm == SortAlgorithm::onesweep ||
              (d.large_algorithm == SortAlgorithm::automatic && policy.chained_large &&
               c.caps.has(feature_memory_model));
  const uint64_t stage_width = std::max(p.key_bytes, p.value_bytes) / 4;
  const uint64_t block_shared = radix_ranking_shared_bytes(stage_width, p.block_wg, p.block_items, 1, p.block_sg,
                                                           2 * kMaxSlots);
  const uint64_t medium_shared =
      radix_ranking_shared_bytes(stage_width, p.medium_wg, p.medium_items, 1, p.medium_sg, 1);
  const uint64_t large_shared = radix_ranking_shared_bytes(stage_width, p.large_wg, p.large_items, 1, p.large_sg, 1);
  const uint64_t most_shared = std::max({block_shared, medium_shared, large_shared});
  const uint32_t most_wg = std::max({p.block_wg, p.medium_wg, p.large_wg});
  if (most_wg > c.caps.max_workgroup_invocations || most_shared > c.caps.max_shared_memory)
    return make_error(Status::unsupported, plan, ": tiles of ", p.block_wg, " x ", p.block_items, ", ",
                      p.medium_wg, " x ", p.medium_items, " and ", p.large_wg, " x ", p.large_items, " keys need ",
                      most_shared, " bytes of shared memory and ", most_wg, " invocations; the device has ",
                      c.caps.max_shared_memory, " and ", c.caps.max_workgroup_invocations);
  SegmentedSortThresholds& t = p.thresholds;
  // The policy's thresholds, shrunk to fit tiles overridden smaller than its own.
  const uint64_t small_limit = std::min<uint64_t>(p.block_tile / 2, kMaxSmall);
  t.small_max = d.thresholds.small_max ? d.thresholds.small_max : uint32_t(std::min<uint64_t>(policy.small_max, small_limit));
  t.medium_max = d.thresholds.medium_max
                     ? d.thresholds.medium_max
                     : uint32_t(std::min<uint64_t>(policy.medium_max ? policy.medium_max : p.medium_tile, p.medium_tile));
  t.medium_max = std::max(t.medium_max, t.small_max);
  if (t.small_max > small_limit || t.medium_max > p.medium_tile)
    return make_error(Status::invalid_argument, plan, ": thresholds small_max ", t.small_max, " and medium_max ",
                      t.medium_max, " must not exceed ", small_limit, " and the medium tile ", p.medium_tile);
  // A batch takes the small segments whose weight prefix falls in one span: at most span - 1 + small_max keys
  // (one tile) and, each weighing at least min_weight, at most 255 segments (classify.comp).
  p.batch_span = uint32_t(p.block_tile) - t.small_max + 1;
  p.min_weight = std::max(1u, (p.batch_span - 1 + (kMaxSlots - 1) - 1) / (kMaxSlots - 1));
  return {};
}

// One binding covers the keys, the values and the offsets; the large passes' dispatches spill into y only.
Result<void> check_segmented_sort_limits(const ContextImpl& c, const SegmentedSortDesc& d, const SegmentedSortPlan& p) {
  constexpr const char* plan = "SegmentedSort::create";
  const uint32_t widest = std::max(p.key_bytes, p.value_bytes);
  if (d.max_count > window_elements(c, widest, 1))
    return make_error(Status::unsupported, plan, ": max_count ", d.max_count, " keys or values of ", widest,
                      " bytes exceed one storage-buffer binding (maxStorageBufferRange ", c.caps.max_storage_buffer_range,
                      " bytes)");
  if (d.max_segments > window_elements(c, 4, 1) || d.max_segments > 0xffffffffull)
    return make_error(Status::unsupported, plan, ": max_segments ", d.max_segments,
                      " offsets exceed one storage-buffer binding");
  const uint64_t x = c.caps.max_workgroup_count[0];
  const uint64_t most = std::max({d.max_segments, p.max_tiles, ceil_div(d.max_segments, kClassifyWorkgroup)});
  if (ceil_div(most, x) > c.caps.max_workgroup_count[1])
    return make_error(Status::unsupported, plan, ": ", most, " workgroups exceed the device's x*y dispatch limits");
  return {};
}

KernelDesc segmented_kernel_desc(const SegmentedSortPlan& p, KernelName name, uint32_t wg, uint32_t items,
                                 uint32_t min_sg, bool ranking) {
  KernelDesc kd{name};
  kd.plan = "SegmentedSort::create";
  kd.group = &kShaderGroup_segmented_sort;
  kd.variant = ranking && !min_sg ? "nosg" : "default";
  kd.workgroup_size = wg;
  kd.items = items;
  kd.uses_subgroups = ranking && min_sg;
  if (ranking && min_sg) kd.spec.subgroup_min = min_sg;
  kd.spec.key_flags = p.key_flags;
  return kd;
}

// Every kernel a record may take: classify and the batch pass always, the medium downsweep where max_count
// allows a segment past small_max, the large passes where it allows one past large_above.
Result<void> build_segmented_sort_kernels(ContextImpl& c, SegmentedSortPlan& p) {
  const size_t kw = p.key_bytes == 8 ? 1 : 0, vw = p.value_bytes / 4;
  auto take = [&](const Kernel*& slot, const KernelDesc& kd) -> Result<void> {
    auto k = get_kernel(c, kd);
    if (!k) return std::move(k).error();
    slot = k.value();
    return {};
  };
  const KernelDesc wanted[] = {
      segmented_kernel_desc(p, kClassifyKernel, kClassifyWorkgroup, 1, 0, false),
      segmented_kernel_desc(p, kTileKernels[kw][vw], p.block_wg, p.block_items, p.block_sg, true),
      segmented_kernel_desc(p, kDownsweepKernels[kw][vw], p.medium_wg, p.medium_items, p.medium_sg, true),
      segmented_kernel_desc(p, kUpsweepKernels[kw], p.large_wg, p.large_items, 0, false),
      segmented_kernel_desc(p, kScanKernel, kScanWorkgroup, 1, 0, false),
      segmented_kernel_desc(p, kDownsweepKernels[kw][vw], p.large_wg, p.large_items, p.large_sg, true),
      segmented_kernel_desc(p, kHistogramKernels[kw], p.large_wg, p.large_items, 0, false),
      segmented_kernel_desc(p, kChainedKernels[kw][vw], p.large_wg, p.large_items, p.large_sg, true)};
  const Kernel** slots[] = {&p.classify, &p.tile, &p.medium_downsweep, &p.upsweep, &p.scan, &p.downsweep,
                            &p.histogram, &p.chained_digit};
  static_assert(std::size(slots) == std::size(wanted));
  // The scan serves both large algorithms (per digit, or once: onesweep's segment prefixes).
  const bool needed[] = {true,
                         true,
                         p.medium,
                         p.large && !p.chained,
                         p.large,
                         p.large && !p.chained,
                         p.large && p.chained,
                         p.large && p.chained};
  static_assert(std::size(needed) == std::size(wanted));
  for (size_t i = 0; i < std::size(wanted); ++i)
    if (needed[i])
      if (auto ok = take(*slots[i], wanted[i]); !ok) return ok;
  auto args = indirect_args_kernel(c, "SegmentedSort::create");
  if (!args) return std::move(args).error();
  p.args = args.value();
  return {};
}

// Scratch: meta (header, lists, digit table), the dispatch arguments, the ping-pong keys and values, the
// record_indirect region. Without overlapping segments at most max_count / (large_above + 1) are large and
// their tiles number at most max_count / large_tile + that. The large list holds only segments of several
// tiles (classify.comp), so at most max_count / (max(large_above, large_tile) + 1) of them.
Result<void> lay_out_segmented_sort_scratch(const ContextImpl& c, const SegmentedSortDesc& d, SegmentedSortPlan& p) {
  const uint64_t shortest_large = std::max(p.large_above, p.large_tile) + 1;
  p.max_large = p.large ? std::min<uint64_t>(d.max_segments, d.max_count / shortest_large) : 0;
  p.max_tiles = p.large ? d.max_count / p.large_tile + p.max_large : 0;
  // Two words (the bounds) per medium segment and one-tile large segment.
  const uint64_t medium_words = p.medium || p.large ? 2 * d.max_segments : 0;
  // onesweep: each tile's digit counts and each large segment's prefixes, 256 words per digit pass.
  const uint64_t histogram_words = p.chained ? uint64_t(kDigits) * p.passes * (p.max_tiles + p.max_large) : 0;
  const uint64_t words = kListsWord + 3 * d.max_segments + medium_words + 4 * p.max_large +
                         (1 + kDigits) * p.max_tiles + histogram_words;
  p.align = binding_alignment(c);
  p.meta_bytes = align_up(words * 4, p.align);
  if (p.meta_bytes > c.caps.max_storage_buffer_range || words > 0xffffffffull)
    return make_error(Status::unsupported, "SegmentedSort::create: max_segments ", d.max_segments, " and max_count ",
                      d.max_count, " need ", words * 4, " bytes of lists and digit tables; one storage-buffer ",
                      "binding holds ", c.caps.max_storage_buffer_range);
  p.member_list = kListsWord;
  p.batch_list = uint32_t(p.member_list + d.max_segments);
  p.medium_list = uint32_t(p.batch_list + 2 * d.max_segments);
  p.large_list = uint32_t(p.medium_list + medium_words);
  p.owners = uint32_t(p.large_list + 4 * p.max_large);
  p.table = uint32_t(p.owners + p.max_tiles);
  p.args_offset = p.meta_bytes;
  p.keys_offset = p.args_offset + align_up(kArgsWords * 4, p.align);
  const bool ping_pong = p.medium || p.large;
  p.keys_bytes = ping_pong ? align_up(d.max_count * p.key_bytes, p.align) : 0;
  p.values_offset = p.keys_offset + p.keys_bytes;
  p.values_bytes = ping_pong ? align_up(d.max_count * p.value_bytes, p.align) : 0;
  p.indirect_offset = p.values_offset + p.values_bytes;
  p.scratch_bytes = p.indirect_offset + align_up(kIndirectRegionBytes, p.align);
  return {};
}

}  // namespace
}  // namespace detail

using detail::make_error;

SegmentedSort::SegmentedSort(std::unique_ptr<detail::SegmentedSortPlan> plan) : plan_(std::move(plan)) {}
SegmentedSort::SegmentedSort(SegmentedSort&&) noexcept = default;
SegmentedSort& SegmentedSort::operator=(SegmentedSort&&) noexcept = default;
SegmentedSort::~SegmentedSort() = default;

const SegmentedSortDesc& SegmentedSort::desc() const { return plan_->desc; }
SegmentedSortThresholds SegmentedSort::thresholds() const { return plan_->thresholds; }
uint64_t SegmentedSort::block_tile_keys() const { return plan_->block_tile; }
uint64_t SegmentedSort::medium_tile_keys() const { return plan_->medium_tile; }
uint64_t SegmentedSort::large_tile_keys() const { return plan_->large_tile; }
uint32_t SegmentedSort::digit_passes() const { return plan_->passes; }
SortAlgorithm SegmentedSort::large_algorithm() const {
  return plan_->chained ? SortAlgorithm::onesweep : SortAlgorithm::reduce_then_scan;
}
void SegmentedSort::release_descriptor_sets() const { plan_->descriptors->release(); }

ScratchRequirements SegmentedSort::scratch_requirements() const {
  return {plan_->scratch_bytes, plan_->align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}

// validate → resolve the policy (kSegmentedSortPolicy) → limits → kernels → scratch.
Result<SegmentedSort> SegmentedSort::create(Context& context, const SegmentedSortDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_segmented_sort_desc(c, desc); !ok) return ok.error();
  auto plan = std::make_unique<detail::SegmentedSortPlan>();
  auto& p = *plan;
  p.context = &c;
  p.desc = desc;
  p.key_bytes = size_of(desc.key_type);
  p.value_bytes = desc.value_size;
  p.begin_bit = desc.begin_bit;
  p.end_bit = desc.end_bit ? desc.end_bit : 8 * p.key_bytes;
  p.passes = (p.end_bit - p.begin_bit + 7) / 8;
  if (desc.key_type == DataType::i32 || desc.key_type == DataType::i64) p.key_flags |= detail::kSigned;
  if (desc.key_type == DataType::f32 || desc.key_type == DataType::f64) p.key_flags |= detail::kFloat;
  if (desc.order == SortOrder::descending) p.key_flags |= detail::kDescending;
  if (auto ok = detail::resolve_segmented_sort_policy(c, desc, p); !ok) return ok.error();
  p.medium = desc.max_count > p.thresholds.small_max && p.thresholds.medium_max > p.thresholds.small_max;
  p.large_above = std::max<uint64_t>(p.thresholds.medium_max, p.block_tile);
  p.large = desc.max_count > p.large_above;
  auto laid_out = detail::lay_out_segmented_sort_scratch(c, desc, p);
  if (!laid_out && p.chained && desc.large_algorithm == SortAlgorithm::automatic) {
    // onesweep's counts (digit_passes() KiB per tile) past one binding: automatic takes reduce_then_scan.
    p.chained = false;
    laid_out = detail::lay_out_segmented_sort_scratch(c, desc, p);
  }
  if (!laid_out) return laid_out.error();
  if (auto ok = detail::check_segmented_sort_limits(c, desc, p); !ok) return ok.error();
  if (auto ok = detail::build_segmented_sort_kernels(c, p); !ok) return ok.error();
  p.descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return SegmentedSort(std::move(plan));
}

namespace detail {
namespace {

// What a record binds: the caller's keys, values and offsets, scratch's parts, and the bound every offset
// is clamped to (the keys the range holds, at most max_count).
struct SegSortBindings {
  ElementBinding keys, values, alt_keys, alt_values, begin, end;
  BoundBuffer meta{}, region{}, entries{};
  uint32_t bound = 0;
};

SegSortBindings bind_segmented_sort(const ContextImpl& c, const SegmentedSortPlan& p, const BufferRange& keys,
                                    const BufferRange& values, const BufferRange* begin, const BufferRange* end,
                                    uint64_t segments, const BufferRange& scratch) {
  SegSortBindings b;
  const uint64_t n = std::min<uint64_t>(p.desc.max_count, keys.size / p.key_bytes);
  b.bound = uint32_t(n);
  const uint32_t vb = p.value_bytes ? p.value_bytes : p.key_bytes;
  b.keys = bind_elements(c, keys, 0, n, p.key_bytes);
  b.values = bind_elements(c, p.value_bytes ? values : keys, 0, n, vb);
  const BufferRange alt_keys{scratch.buffer, scratch.offset + p.keys_offset, std::max<VkDeviceSize>(p.keys_bytes, 16)};
  const BufferRange alt_values{scratch.buffer, scratch.offset + (p.value_bytes ? p.values_offset : p.keys_offset),
                               std::max<VkDeviceSize>(p.value_bytes ? p.values_bytes : p.keys_bytes, 16)};
  const bool ping_pong = p.medium || p.large;
  b.alt_keys = ping_pong ? bind_elements(c, alt_keys, 0, n, p.key_bytes) : b.keys;
  b.alt_values = ping_pong ? bind_elements(c, alt_values, 0, n, vb) : b.values;
  b.begin = begin ? bind_elements(c, *begin, 0, segments, 4) : b.keys;
  b.end = end ? bind_elements(c, *end, 0, segments, 4) : b.keys;
  b.meta = {scratch.buffer, scratch.offset, p.meta_bytes};
  b.region = {scratch.buffer, scratch.offset + p.indirect_offset, kIndirectRegionBytes};
  b.entries = {scratch.buffer, scratch.offset + p.args_offset, kArgsWords * 4};
  return b;
}

// Builds the passes of one record: every pass has the same bindings but for the ping-pong of the large passes.
class SegSortPasses {
 public:
  SegSortPasses(const SegmentedSortPlan& p, const SegSortBindings& b, uint64_t segments, uint32_t flags,
                uint32_t segment_size, std::vector<Pass>& passes)
      : p_(p), b_(b), segments_(segments), flags_(flags), segment_size_(segment_size), passes_(passes) {}

  // classify (with the header clear before it), then its argument-writing dispatch. indirect_entry: the
  // record_indirect entry that sizes classify (-1: segments_ / 256 workgroups).
  void classify(int32_t indirect_entry) {
    Pass& first = pass(p_.classify, "classify", ceil_div(segments_, kClassifyWorkgroup), 0, false, 0);
    first.indirect_entry = indirect_entry;
    first.indirect_region = b_.region;
    first.fill_before = true;
    // The header, and up to 16 KiB of the lists: NVIDIA's small fills cost more (plan_common.hpp).
    first.fill = {b_.meta.buffer, b_.meta.offset, state_clear_bytes(0, 0, p_.meta_bytes)};
    pass(p_.classify, "dispatch arguments", 1, 0, false, kArgs);
  }

  void batches() { from_entry(pass(p_.tile, "batches", 1, p_.begin_bit, false, 0), kEntryBatches); }

  // The digit passes of the medium segments and of the large ones (onesweep: after the histogram pass), and
  // the copy back after an odd number.
  void digit_passes(bool medium, bool large) {
    if (large && p_.chained) {
      from_entry(pass(p_.histogram, "large histogram", 1, p_.begin_bit, false, 0), kEntryTiles);
      from_entry(pass(p_.scan, "large prefixes", 1, p_.begin_bit, false, 0), kEntryLarge);
    }
    for (uint32_t d = 0; d < p_.passes; ++d) {
      const uint32_t bit = p_.begin_bit + 8 * d;
      const bool odd = d % 2 == 1;
      const std::string digit = " digit " + std::to_string(d);
      if (medium) from_entry(pass(p_.medium_downsweep, ("medium" + digit).c_str(), 1, bit, odd, kMedium), kEntryMedium);
      if (!large) continue;
      if (p_.chained) {
        // The one-tile segments rank in the same dispatch (H200, 2^24 keys: 4096-key segments 412 us there
        // against 407 in a downsweep dispatch of their own, 65536-key 527 against 533, splat 757-761 against
        // 773-778).
        from_entry(pass(p_.chained_digit, ("large chained" + digit).c_str(), 1, bit, odd, 0), kEntryDownsweep);
        continue;
      }
      from_entry(pass(p_.upsweep, ("large upsweep" + digit).c_str(), 1, bit, odd, 0), kEntryTiles);
      from_entry(pass(p_.scan, ("large scan" + digit).c_str(), 1, bit, odd, 0), kEntryLarge);
      from_entry(pass(p_.downsweep, ("large downsweep" + digit).c_str(), 1, bit, odd, 0), kEntryDownsweep);
    }
    if (p_.passes % 2 == 0) return;
    if (medium) from_entry(pass(p_.medium_downsweep, "medium copy back", 1, 0, true, kCopy | kMedium), kEntryMedium);
    if (large) from_entry(pass(p_.chained ? p_.chained_digit : p_.downsweep, "large copy back", 1, 0, true, kCopy),
                          kEntryDownsweep);
  }

 private:
  void from_entry(Pass& pass, uint32_t entry) {
    pass.indirect_entry = int32_t(entry);
    pass.indirect_region = b_.entries;
  }

  // A pass of `kernel` at digit `bit`; `swapped`: reads the scratch copy and writes the caller's buffers.
  Pass& pass(const Kernel* kernel, const char* what, uint64_t groups, uint32_t bit, bool swapped, uint32_t seg_flags) {
    const ElementBinding& kin = swapped ? b_.alt_keys : b_.keys;
    const ElementBinding& kout = swapped ? b_.keys : b_.alt_keys;
    const ElementBinding& vin = swapped ? b_.alt_values : b_.values;
    const ElementBinding& vout = swapped ? b_.values : b_.alt_values;
    const bool in_place = kernel == p_.tile;  // the batches: the caller's buffers both ways
    Pass pass;
    pass.kernel = kernel;
    // Binding 5: the dispatch arguments for the pass that writes them, else record_indirect's region (read by
    // classify), or meta as a placeholder.
    const bool args = (seg_flags & kArgs) != 0;
    pass.buffers = {kin.bound, in_place ? kin.bound : kout.bound, vin.bound, in_place ? vin.bound : vout.bound,
                    b_.meta, args ? b_.entries : (flags_ & kIndirect) ? b_.region : b_.meta, b_.begin.bound,
                    b_.end.bound};
    const uint32_t shifts = kin.shift | (in_place ? kin.shift : kout.shift) << 8 | vin.shift << 16 |
                            (in_place ? vin.shift : vout.shift) << 24;
    const uint32_t digit_mask = (1u << std::min(8u, p_.end_bit - std::min(bit, p_.end_bit))) - 1u;
    const SegmentedSortThresholds& t = p_.thresholds;
    // The pass index (its ticket and state parity), and the chained passes' spin limit and knobs.
    const uint32_t pass_index = (std::max(bit, p_.begin_bit) - p_.begin_bit) / 8;
    const ContextImpl& c = *p_.context;
    const bool chained = kernel == p_.chained_digit;
    const uint32_t spin = chained ? c.spin_limit() : 0, knobs = chained ? chained_knobs(c, true, p_.max_tiles) : 0;
    const uint32_t flags = flags_ | seg_flags | (p_.chained ? kChained : 0u);
    const uint32_t words[kPushWords] = {
        0, uint32_t(groups), shifts, bit, p_.end_bit, p_.passes << 16 | pass_index << 8, spin, knobs, 0, 0,
        digit_mask, 0, uint32_t(segments_), flags, segment_size_, b_.bound, b_.begin.shift, b_.end.shift, t.small_max,
        t.medium_max, p_.batch_span, p_.min_weight, p_.member_list, p_.batch_list, p_.large_list, p_.owners, p_.table,
        uint32_t(p_.max_large), uint32_t(p_.max_tiles), uint32_t(p_.large_tile),
        p_.context->caps.max_workgroup_count[0], p_.medium_list};
    static_assert(kSortWords == 12);
    std::copy(std::begin(words), std::end(words), pass.push.begin());
    pass.groups = groups;
    // Only the arguments pass writes what indirect dispatches read: the other barriers are compute to compute.
    pass.writes_indirect_args = args;
    pass.label = std::string("vkprim segmented_sort/") + what;
    passes_.push_back(std::move(pass));
    return passes_.back();
  }

  const SegmentedSortPlan& p_;
  const SegSortBindings& b_;
  uint64_t segments_;
  uint32_t flags_, segment_size_;
  std::vector<Pass>& passes_;
};

// The checks every record shares: keys (at least one, or `need_keys`), values alike, the offsets for
// `segments`, scratch, and the overlaps that would race.
Result<void> check_segmented_sort_buffers(const SegmentedSortPlan& p, const char* call, const BufferRange& keys,
                                          const BufferRange& values, uint64_t need_keys, const BufferRange* begin,
                                          const BufferRange* end, uint64_t segments, const BufferRange& scratch) {
  const uint64_t n = std::max<uint64_t>(need_keys, 1);
  if (auto ok = check_range(keys, n * p.key_bytes, p.key_bytes, "keys", true); !ok) return with_call(ok, call);
  const uint64_t bound = std::min<uint64_t>(p.desc.max_count, keys.size == VK_WHOLE_SIZE ? p.desc.max_count
                                                                                          : keys.size / p.key_bytes);
  const VkDeviceSize key_bytes = std::max(bound, n) * p.key_bytes, value_bytes = std::max(bound, n) * p.value_bytes;
  if (p.value_bytes)
    if (auto ok = check_range(values, value_bytes, p.value_bytes, "values", true); !ok) return with_call(ok, call);
  for (const auto& [range, what] : {std::pair{begin, "begin offsets"}, std::pair{end, "end offsets"}})
    if (range)
      if (auto ok = check_range(*range, segments * 4, 4, what, true); !ok) return with_call(ok, call);
  const ScratchRequirements need{p.scratch_bytes, p.align, 0};
  if (auto ok = check_scratch(scratch, need, call); !ok) return ok;
  const std::array<std::pair<const BufferRange*, VkDeviceSize>, 4> ranges = {
      {{begin, segments * 4}, {end, segments * 4}, {&scratch, need.size}, {p.value_bytes ? &values : nullptr, value_bytes}}};
  const char* names[] = {"begin offsets", "end offsets", "scratch", "values"};
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (!ranges[i].first) continue;
    if (overlaps(keys, key_bytes, *ranges[i].first, ranges[i].second))
      return make_error(Status::invalid_argument, call, ": keys and ", names[i], " ranges overlap");
    if (p.value_bytes && i != 3 && overlaps(values, value_bytes, *ranges[i].first, ranges[i].second))
      return make_error(Status::invalid_argument, call, ": values and ", names[i], " ranges overlap");
    if (i < 2 && overlaps(scratch, need.size, *ranges[i].first, ranges[i].second))
      return make_error(Status::invalid_argument, call, ": scratch and ", names[i], " ranges overlap");
  }
  return {};
}

Result<void> check_segment_count(const SegmentedSortPlan& p, const char* call, uint64_t segments) {
  if (segments > p.desc.max_segments)
    return make_error(Status::invalid_argument, call, ": segments ", segments, " exceeds max_segments ",
                      p.desc.max_segments);
  return {};
}

}  // namespace
}  // namespace detail

Result<void> SegmentedSort::record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                   const BufferRange& begin_offsets, const BufferRange& end_offsets, uint64_t segments,
                                   const BufferRange& scratch) const {
  const detail::SegmentedSortPlan& p = *plan_;
  constexpr const char* call = "SegmentedSort::record";
  if (auto ok = detail::check_segment_count(p, call, segments); !ok) return ok;
  if (auto ok = detail::check_segmented_sort_buffers(p, call, keys, values, 0, &begin_offsets, &end_offsets, segments,
                                                     scratch);
      !ok)
    return ok;
  if (!cmd) return make_error(Status::invalid_argument, call, ": command buffer is VK_NULL_HANDLE");
  if (segments == 0) return {};
  const auto b = detail::bind_segmented_sort(*p.context, p, keys, values, &begin_offsets, &end_offsets, segments, scratch);
  std::vector<detail::Pass> passes;
  detail::SegSortPasses build(p, b, segments, 0, 0, passes);
  build.classify(-1);
  build.batches();
  build.digit_passes(p.medium && b.bound > p.thresholds.small_max, p.large && b.bound > p.large_above);
  return detail::record_passes(*p.context, *p.descriptors, cmd, passes, detail::kPlan, "record");
}

Result<void> SegmentedSort::record_fixed(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                         uint64_t segment_size, uint64_t segments, const BufferRange& scratch) const {
  const detail::SegmentedSortPlan& p = *plan_;
  constexpr const char* call = "SegmentedSort::record_fixed";
  if (auto ok = detail::check_segment_count(p, call, segments); !ok) return ok;
  if (segment_size > p.desc.max_count || segments * segment_size > p.desc.max_count)
    return make_error(Status::invalid_argument, call, ": ", segments, " segments of ", segment_size,
                      " keys exceed max_count ", p.desc.max_count);
  if (auto ok = detail::check_segmented_sort_buffers(p, call, keys, values, segments * segment_size, nullptr, nullptr,
                                                     segments, scratch);
      !ok)
    return ok;
  if (!cmd) return make_error(Status::invalid_argument, call, ": command buffer is VK_NULL_HANDLE");
  if (segments == 0 || segment_size <= 1) return {};
  const auto b = detail::bind_segmented_sort(*p.context, p, keys, values, nullptr, nullptr, segments, scratch);
  std::vector<detail::Pass> passes;
  detail::SegSortPasses build(p, b, segments, detail::kFixed, uint32_t(segment_size), passes);
  build.classify(-1);
  if (segment_size <= p.thresholds.small_max || (segment_size > p.thresholds.medium_max && segment_size <= p.large_above))
    build.batches();
  else
    build.digit_passes(segment_size <= p.thresholds.medium_max, segment_size > p.large_above);
  return detail::record_passes(*p.context, *p.descriptors, cmd, passes, detail::kPlan, "record_fixed");
}

Result<void> SegmentedSort::record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                            const BufferRange& begin_offsets, const BufferRange& end_offsets,
                                            const BufferRange& segment_count, const BufferRange& scratch) const {
  const detail::SegmentedSortPlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  constexpr const char* call = "SegmentedSort::record_indirect";
  const uint64_t max_segments = p.desc.max_segments;
  if (auto ok = detail::check_count_buffer(segment_count, call); !ok) return ok;
  if (auto ok = detail::check_segmented_sort_buffers(p, call, keys, values, 0, &begin_offsets, &end_offsets,
                                                     max_segments, scratch);
      !ok)
    return ok;
  if (detail::overlaps(scratch, p.scratch_bytes, segment_count, 4) ||
      detail::overlaps(keys, p.desc.max_count * p.key_bytes, segment_count, 4) ||
      (p.value_bytes && detail::overlaps(values, p.desc.max_count * p.value_bytes, segment_count, 4)))
    return make_error(Status::invalid_argument, call, ": the segment count overlaps keys, values or scratch");
  const auto b = detail::bind_segmented_sort(c, p, keys, values, &begin_offsets, &end_offsets, max_segments, scratch);
  std::vector<detail::Pass> passes;
  passes.push_back(detail::make_indirect_args_pass(c, p.args, segment_count, b.region, max_segments,
                                                   {{detail::kClassifyWorkgroup, 0, 0, 0}}));
  detail::SegSortPasses build(p, b, max_segments, detail::kIndirect, 0, passes);
  build.classify(0);
  build.batches();
  build.digit_passes(p.medium && b.bound > p.thresholds.small_max, p.large && b.bound > p.large_above);
  return detail::record_passes(c, *p.descriptors, cmd, passes, detail::kPlan, "record_indirect");
}

}  // namespace vkprim
