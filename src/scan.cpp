// Scan: the classic multi-level scans. Hillis & Steele, "Data parallel algorithms" (1986); Blelloch,
// "Prefix sums and their applications" (1990); Harris, Sengupta & Owens, "Parallel Prefix Sum (Scan) with
// CUDA", GPU Gems 3 ch. 39 (2007); reduce-then-scan as background in Merrill & Garland, "Single-pass
// parallel prefix scan with decoupled look-back" (2016).
//
// Every algorithm scans the input window by window (a window is what one storage-buffer binding can
// cover); the pass that sees a window's whole total (the last Hillis-Steele step, the Blelloch root, the
// top block level, or the single tile) starts from the previous window's carry (scratch carry slot P) and
// writes the next one (slot 1 - P), with P alternating by window parity.
#include "vkprim/scan.hpp"

#include <algorithm>
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

const char* to_string(ScanKind k) {
  switch (k) {
    case ScanKind::inclusive: return "inclusive";
    case ScanKind::exclusive: return "exclusive";
  }
  return "unknown";
}

bool parse(const char* name, ScanKind& out) { return detail::parse_enum(name, ScanKind::exclusive, out); }

const char* to_string(ScanAlgorithm a) {
  switch (a) {
    case ScanAlgorithm::automatic: return "automatic";
    case ScanAlgorithm::hillis_steele: return "hillis_steele";
    case ScanAlgorithm::blelloch_global: return "blelloch_global";
    case ScanAlgorithm::blocked_blelloch: return "blocked_blelloch";
    case ScanAlgorithm::subgroup_blocked: return "subgroup_blocked";
    case ScanAlgorithm::reduce_then_scan: return "reduce_then_scan";
    case ScanAlgorithm::chained_lookback: return "chained_lookback";
    case ScanAlgorithm::chained_fallback: return "chained_fallback";
  }
  return "unknown";
}

bool parse(const char* name, ScanAlgorithm& out) {
  return detail::parse_enum(name, ScanAlgorithm::chained_fallback, out);
}

namespace detail {

namespace {

constexpr uint32_t kWorkgroup = 256;
// reduce_then_scan: tiles of 128 invocations x 4 vectors, whose more resident workgroups overlap one tile's
// scan with another's loads (docs/PERFORMANCE.md, Scan).
constexpr uint32_t kTileWorkgroup = 128;
constexpr uint32_t kRows = 4;

// Chained-scan tile shapes per device class: the first row whose driver and subgroup size match (0 = any)
// applies. A tile is workgroup_size x vectors 16-byte vectors; integer chained_fallback windows of
// wide_from elements or more take wide_vectors instead (0: never), through a second kernel; a look-back
// step loads lookback_windows subgroup-wide windows of predecessor states at once.
struct ChainedTuning {
  VkDriverId driver;
  uint32_t subgroup_size;
  uint32_t workgroup_size, vectors, wide_vectors;
  uint64_t wide_from;
  uint32_t lookback_windows;
};
constexpr ChainedTuning kChainedTuning[] = {
    // NVIDIA: 8 vectors for integer windows from 2^25, 4 (faster) below; one look-back window, as more
    // measured slower (docs/PERFORMANCE.md, Scan).
    {VK_DRIVER_ID_NVIDIA_PROPRIETARY, 32, 256, 4, 8, uint64_t(1) << 25, 1},
    // Every other device (lavapipe, subgroup size 8, is tuned for correctness runs only).
    {VkDriverId(0), 0, 256, 4, 0, 0, 1},
};

// Drivers known to give no forward progress between workgroups of a dispatch, where a tile that spins on
// its predecessor can wait forever. llvmpipe also ends every loop after 65535 iterations and lets it fall
// through (seen under load, LP_NUM_THREADS=8); Apple's and Mali's GPUs do not reschedule a spinning
// workgroup (Smith, Levien & Owens, SPAA 2025, measured look-back hangs there).
constexpr VkDriverId kNoForwardProgress[] = {VK_DRIVER_ID_MESA_LLVMPIPE, VK_DRIVER_ID_MOLTENVK,
                                              VK_DRIVER_ID_ARM_PROPRIETARY, VK_DRIVER_ID_MESA_PANVK};

bool lacks_forward_progress(VkDriverId driver) {
  return std::find(std::begin(kNoForwardProgress), std::end(kNoForwardProgress), driver) !=
         std::end(kNoForwardProgress);
}

const ChainedTuning& chained_tuning(const Capabilities& caps) {
  for (const ChainedTuning& t : kChainedTuning)
    if ((t.driver == 0 || t.driver == caps.driver_id) &&
        (t.subgroup_size == 0 || t.subgroup_size == caps.max_subgroup_size))
      return t;
  return kChainedTuning[std::size(kChainedTuning) - 1];
}

// Flag bits of common/scan_io.glsl.
enum : uint32_t {
  kInVectors = 1u,
  kOutVectors = 2u,
  kExclusive = 4u,
  kCarryInSlot = 8u,
  kCarryOutSlot = 16u,
  kWriteSums = 32u,
  kCarryFromAux = 64u,
  kSlotParity = 128u,
  kFirst = 256u,
  kLast = 512u,
  kCarryTwoLevel = 1024u,
  kIndirect = 2048u,
};
constexpr uint32_t kEntryShift = 24;  // SCAN_ENTRY_SHIFT: the indirect entry in the flags' top byte

bool is_chained(ScanAlgorithm a) {
  return a == ScanAlgorithm::chained_lookback || a == ScanAlgorithm::chained_fallback;
}

uint32_t ceil_log2(uint64_t n) {
  uint32_t l = 0;
  while ((uint64_t(1) << l) < n) ++l;
  return l;
}

// The carry flags of window w of `windows`: read slot P = (w + 1) % 2 (the one window w - 1 wrote), write
// slot 1 - P = w % 2.
uint32_t window_flags(uint64_t w, uint64_t windows) {
  if (windows <= 1) return 0;
  uint32_t f = (w + 1) % 2 ? kSlotParity : 0u;
  if (w > 0) f |= kCarryInSlot;
  if (w + 1 < windows) f |= kCarryOutSlot;
  return f;
}

}  // namespace

struct ScanPlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  ScanDesc desc;
  ScanAlgorithm algorithm = ScanAlgorithm::reduce_then_scan;
  uint32_t elem = 4;
  uint32_t vec = 4;                  // elements per 16-byte vector (a user operator's "vector" is one element)
  uint32_t wg = kWorkgroup;          // invocations per workgroup (WG_SIZE) of every kernel of the plan
  bool subgroups = false;            // the subgroup variants are in use (not the emulation)
  const Kernel* step = nullptr;      // hillis_steele
  const Kernel* up = nullptr;        // blelloch_global
  const Kernel* down = nullptr;
  const Kernel* block = nullptr;     // blocked levels (blelloch_block or subgroup_block)
  const Kernel* add = nullptr;
  const Kernel* tile_reduce = nullptr;  // reduce_then_scan
  const Kernel* tile_scan = nullptr;
  const Kernel* chained = nullptr;      // chained_lookback / chained_fallback
  const Kernel* chained_narrow = nullptr;  // chained tiles for windows under wide_from when `chained` is wide
  uint64_t narrow_tile_elements = 0, wide_from = 0;
  VkDeviceSize state_offset = 0, state_bytes = 0;  // chained tile state: 64-byte header + one state per tile
  VkDeviceSize state_tile_bytes = 0;                // one tile's state (u64 word, or 2 or 4 u32 parts)
  uint64_t block_elements = 0;       // elements per block of `block`
  uint64_t tile_elements = 0;        // elements per reduce_then_scan tile
  uint64_t window = 0;               // elements per binding window
  VkDeviceSize scratch_align = 16;
  std::vector<VkDeviceSize> region_offset, region_bytes;  // level sums / working arrays
  VkDeviceSize carry_offset = 0, carry_bytes = 0;         // the two carry slots (windowed plans)
  VkDeviceSize indirect_offset = 0;  // record_indirect's args region
  const Kernel* args_kernel = nullptr;
  VkDeviceSize scratch_bytes = 0;
  std::unique_ptr<DescriptorSets> descriptors;

  uint64_t windows_for(uint64_t n) const { return std::max<uint64_t>(1, ceil_div(n, window)); }
  // The chained kernel and its tile size for a window of n elements.
  std::pair<const Kernel*, uint64_t> chained_shape(uint64_t n) const {
    if (chained_narrow && n < wide_from) return {chained_narrow, narrow_tile_elements};
    return {chained, tile_elements};
  }
  // Tiles of the tile state for any window of up to n elements, whichever shape it takes.
  uint64_t chained_max_tiles(uint64_t n) const {
    const uint64_t wide = ceil_div(n, tile_elements);
    return chained_narrow ? std::max(wide, ceil_div(std::min(n, wide_from - 1), narrow_tile_elements)) : wide;
  }
  // Block levels of a blocked scan of n elements (the top level is one block).
  uint32_t block_levels(uint64_t n) const {
    uint32_t levels = 1;
    for (uint64_t b = ceil_div(n, block_elements); b > 1; b = ceil_div(b, block_elements)) ++levels;
    return levels;
  }
};

namespace {

// A binding: `count` elements of `range` from element `first`.
struct Span {
  BufferRange range;
  uint64_t first = 0;
  uint64_t count = 1;
};

// Builds the passes of one record() call.
class PassBuilder {
 public:
  PassBuilder(const ScanPlan& p, const BufferRange& input, const BufferRange& output, const BufferRange& scratch,
              std::vector<Pass>& passes)
      : p_(p), c_(*p.context), input_(input), output_(output), scratch_(scratch), passes_(passes) {}

  // record_indirect: the passes take their count and tiles from entry 0 of `region`.
  void set_indirect(const BoundBuffer& region) {
    indirect_ = true;
    indirect_region_ = region;
  }

  void scan(uint64_t count) {
    const uint64_t windows = p_.windows_for(count);
    for (uint64_t w = 0; w < windows; ++w) {
      const uint64_t first = w * p_.window;
      const uint64_t n = std::min(p_.window, count - first);
      window_ = windows > 1 ? " window " + std::to_string(w) : std::string();
      const uint32_t wf = window_flags(w, windows);
      const Span in{input_, first, n}, out{output_, first, n};
      switch (p_.algorithm) {
        case ScanAlgorithm::hillis_steele: hillis_steele(in, out, wf); break;
        case ScanAlgorithm::blelloch_global: blelloch_global(in, out, wf); break;
        case ScanAlgorithm::blocked_blelloch:
        case ScanAlgorithm::subgroup_blocked: blocked_levels(in, out, kind_flag(), 0, wf); break;
        case ScanAlgorithm::chained_lookback:
        case ScanAlgorithm::chained_fallback: chained(in, out, wf); break;
        default: reduce_then_scan(in, out, wf); break;
      }
    }
  }

 private:
  uint32_t kind_flag() const { return p_.desc.kind == ScanKind::exclusive ? kExclusive : 0u; }
  Span region(size_t r, uint64_t count) const {
    return {{scratch_.buffer, scratch_.offset + p_.region_offset[r], p_.region_bytes[r]}, 0, count};
  }
  Span dummy() const { return {output_, 0, 1}; }

  void pass(const Kernel* kernel, const char* what, uint64_t groups, const Span& in, const Span& out, const Span& aux,
            uint64_t count, uint64_t param, uint64_t param2, uint32_t flags) {
    const auto bin = bind_elements(c_, in.range, in.first, in.count, p_.elem);
    const auto bout = bind_elements(c_, out.range, out.first, out.count, p_.elem);
    const auto baux = bind_elements(c_, aux.range, aux.first, aux.count, p_.elem);
    const uint32_t vec = p_.vec;
    Pass pass;
    pass.kernel = kernel;
    pass.buffers[0] = bin.bound;
    pass.buffers[1] = bout.bound;
    pass.buffers[2] = baux.bound;
    pass.buffers[3] = p_.carry_bytes
                          ? BoundBuffer{scratch_.buffer, scratch_.offset + p_.carry_offset, p_.carry_bytes}
                          : bind_elements(c_, output_, 0, 1, p_.elem).bound;
    // Binding 4 of the kernels record_indirect uses: statically used, read only when recorded indirectly.
    if (kernel->desc.kernel.bindings() > 4) pass.buffers[4] = indirect_ ? indirect_region_ : bin.bound;
    if (indirect_) {
      flags |= kIndirect | (uint32_t(entry_) << kEntryShift);
      pass.indirect_entry = entry_;
      pass.indirect_region = indirect_region_;
    }
    if (bin.shift % vec == 0) flags |= kInVectors;
    if (bout.shift % vec == 0) flags |= kOutVectors;
    pass.push = {uint32_t(count), bin.shift, bout.shift, uint32_t(groups), uint32_t(param), uint32_t(param2), flags,
                 baux.shift};
    pass.groups = groups;
    pass.label = std::string("vkprim scan/") + what + window_;
    passes_.push_back(std::move(pass));
  }

  // Hillis-Steele: steps of distance 1, 2, 4, ... (at least two, so the last reads scratch), ping-pong
  // through scratch regions 0 and 1.
  void hillis_steele(const Span& in, const Span& out, uint32_t wf) {
    const uint64_t n = in.count;
    const uint32_t steps = std::max<uint32_t>(2, ceil_log2(n));
    const uint64_t groups = ceil_div(n, p_.wg);
    for (uint32_t k = 0; k < steps; ++k) {
      const bool last = k + 1 == steps;
      const Span src = k == 0 ? in : region((k - 1) % 2, n);
      const Span dst = last ? out : region(k % 2, n);
      pass(p_.step, last ? "hillis_steele last step" : "hillis_steele step", groups, src, dst, dummy(), n,
           uint64_t(1) << k, 0, last ? (kLast | kind_flag() | wf) : 0u);
    }
  }

  // Blelloch: up-sweep levels over the power-of-two working array (region 0), then down-sweep levels
  // from the root (which takes the carry-in) to the last (which writes the output).
  void blelloch_global(const Span& in, const Span& out, uint32_t wf) {
    const uint64_t n = in.count;
    const uint32_t levels = std::max<uint32_t>(1, ceil_log2(n));
    const uint64_t size = uint64_t(1) << levels;
    const Span work = region(0, size);
    for (uint32_t d = 0; d < levels; ++d) {
      const uint64_t pairs = size >> (d + 1);
      pass(p_.up, "blelloch_global up-sweep", ceil_div(pairs, p_.wg), in, out, work, n, uint64_t(1) << d, pairs,
           d == 0 ? kFirst : 0u);
    }
    for (uint32_t d = levels; d-- > 0;) {
      const uint64_t pairs = size >> (d + 1);
      uint32_t flags = 0;
      if (d + 1 == levels) flags |= kFirst | wf;
      if (d == 0) flags |= kLast | kind_flag();
      pass(p_.down, "blelloch_global down-sweep", ceil_div(pairs, p_.wg), in, out, work, n, uint64_t(1) << d,
           pairs, flags);
    }
  }

  // Blocked levels: scan blocks of src into dst writing block sums to region r, r + 1, ... until one
  // block remains (it takes the window carry), then add the scanned sums back level by level.
  void blocked_levels(const Span& src, const Span& dst, uint32_t level0_kind, size_t r, uint32_t wf) {
    struct Level {
      Span dst;
      uint64_t blocks;
      size_t sums;
    };
    std::vector<Level> levels;
    Span s = src, d = dst;
    const uint64_t block = p_.block_elements;
    while (true) {
      const uint64_t blocks = ceil_div(s.count, block);
      const bool top = blocks == 1;
      const uint32_t kind = levels.empty() ? level0_kind : kExclusive;
      const Span sums = top ? dummy() : region(r, blocks);
      pass(p_.block, top ? "block scan (top)" : "block scan", blocks, s, d, sums, s.count, block, 0,
           kind | (top ? wf : kWriteSums));
      levels.push_back({d, blocks, r});
      if (top) break;
      s = d = sums;
      ++r;
    }
    for (size_t l = levels.size() - 1; l-- > 0;) {
      const Level& level = levels[l];
      pass(p_.add, "add carries", level.blocks, level.dst, level.dst, region(level.sums, level.blocks),
           level.dst.count, block, 0, 0);
    }
  }

  // Reduce-then-scan: tile totals into region 0, their exclusive scan (blocked levels, regions 1..), then
  // every tile rescanned with its carry. A window of one tile is a single pass. When the tile sums span
  // exactly two block levels (more tiles than one block holds, up to 2^29 32-bit elements per window), the
  // rescan adds the second level's carry itself instead of an add-back pass; deeper sums use the generic
  // blocked levels.
  // One dispatch per window: clear the tile state (ticket, counters, flags), then every tile scans,
  // looks back and writes (shaders/scan/chained.comp).
  void chained(const Span& in, const Span& out, uint32_t wf) {
    const auto [kernel, tile_elements] = p_.chained_shape(in.count);
    const uint64_t tiles = std::max<uint64_t>(1, ceil_div(in.count, tile_elements));
    const Span state{{scratch_.buffer, scratch_.offset + p_.state_offset, p_.state_bytes}, 0,
                     ceil_div(p_.state_bytes, p_.elem)};
    pass(kernel, p_.algorithm == ScanAlgorithm::chained_fallback ? "chained_fallback" : "chained_lookback", tiles,
         in, out, state, in.count, c_.spin_limit(),
         detail::chained_knobs(c_, p_.algorithm == ScanAlgorithm::chained_fallback, tiles),
         kind_flag() | wf);
    Pass& last = passes_.back();
    last.fill_before = true;
    last.fill = {scratch_.buffer, scratch_.offset + p_.state_offset,
                 state_clear_bytes(tiles, p_.state_tile_bytes, p_.state_bytes)};
    last.fill_word = 0;
  }

  void reduce_then_scan(const Span& in, const Span& out, uint32_t wf) {
    const uint64_t tiles = ceil_div(in.count, p_.tile_elements);
    // Recorded indirectly, the structure is max_count's: entry 0 = the tiles, entry 1 = the blocks of
    // tile sums, entry 2 = the top block (record_indirect refuses deeper structures).
    entry_ = 0;
    if (tiles == 1) {
      pass(p_.tile_scan, "reduce_then_scan tile scan", 1, in, out, dummy(), in.count, 0, 0, kind_flag() | wf);
      return;
    }
    const Span sums = region(0, tiles);
    pass(p_.tile_reduce, "reduce_then_scan tile reduce", tiles, in, out, sums, in.count, 0, 0, 0);
    const uint64_t block = p_.block_elements;
    const uint64_t blocks = ceil_div(tiles, block);
    if (blocks > 1 && blocks <= block) {
      const Span block_sums = region(1, blocks);
      entry_ = 1;
      pass(p_.block, "block scan", blocks, sums, sums, block_sums, tiles, block, 0, kExclusive | kWriteSums);
      entry_ = 2;
      pass(p_.block, "block scan (top)", 1, block_sums, block_sums, dummy(), blocks, block, 0, kExclusive | wf);
      // One binding over both levels: the tile's prefix at element g, its block's carry at level2 + g / block.
      const uint64_t level2 = (p_.region_offset[1] - p_.region_offset[0]) / p_.elem;
      const Span both{{scratch_.buffer, scratch_.offset + p_.region_offset[0], level2 * p_.elem + p_.region_bytes[1]},
                      0, level2 + blocks};
      const auto bound = bind_elements(c_, both.range, 0, both.count, p_.elem);
      entry_ = 0;
      pass(p_.tile_scan, "reduce_then_scan tile scan", tiles, in, out, both, in.count, block, bound.shift + level2,
           kind_flag() | kCarryFromAux | kCarryTwoLevel);
      return;
    }
    entry_ = 1;
    blocked_levels(sums, sums, kExclusive, 1, wf);
    entry_ = 0;
    pass(p_.tile_scan, "reduce_then_scan tile scan", tiles, in, out, sums, in.count, 0, 0,
         kind_flag() | kCarryFromAux);
  }

  const ScanPlan& p_;
  ContextImpl& c_;
  BufferRange input_, output_, scratch_;
  std::vector<Pass>& passes_;
  std::string window_;
  bool indirect_ = false;
  BoundBuffer indirect_region_{};
  int32_t entry_ = 0;  // indirect entry of the next pass
};

}  // namespace

}  // namespace detail

using detail::make_error;

Scan::Scan(std::unique_ptr<detail::ScanPlan> plan) : plan_(std::move(plan)) {}
Scan::Scan(Scan&&) noexcept = default;
Scan& Scan::operator=(Scan&&) noexcept = default;
Scan::~Scan() = default;

const ScanDesc& Scan::desc() const { return plan_->desc; }
ScanAlgorithm Scan::algorithm() const { return plan_->algorithm; }

ScratchRequirements Scan::scratch_requirements() const {
  return {plan_->scratch_bytes, plan_->scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}

uint32_t Scan::dispatch_count(uint64_t count) const {
  if (count == 0) return 0;
  std::vector<detail::Pass> passes;
  const BufferRange none{};
  detail::PassBuilder(*plan_, none, none, none, passes).scan(std::min(count, plan_->desc.max_count));
  return uint32_t(passes.size());
}

uint64_t Scan::float_add_depth(uint64_t count) const {
  const detail::ScanPlan& p = *plan_;
  const uint64_t n = std::max<uint64_t>(1, std::min(count, p.window));
  const uint64_t windows = p.windows_for(count);
  const uint32_t log_wg = detail::ceil_log2(p.wg);
  // A subgroup scan or reduce may be sequential within the subgroup; the raking of the subgroup totals is.
  const uint64_t sg = p.subgroups ? std::max<uint32_t>(1, p.context->full_subgroup_size(p.wg)) : 1;
  const uint64_t wg_scan = p.subgroups ? 2 * sg + detail::ceil_div(p.wg / sg, sg) + 2 : uint64_t(log_wg) + 1;
  const uint64_t wg_reduce = sg + log_wg + 1;
  uint64_t depth = 0;
  switch (p.algorithm) {
    case ScanAlgorithm::hillis_steele: depth = std::max<uint32_t>(2, detail::ceil_log2(n)) + 1; break;
    case ScanAlgorithm::blelloch_global: depth = 2 * uint64_t(std::max<uint32_t>(1, detail::ceil_log2(n))) + 2; break;
    case ScanAlgorithm::blocked_blelloch:
      depth = uint64_t(p.block_levels(n)) * (2 * detail::ceil_log2(p.block_elements) + 3);
      break;
    case ScanAlgorithm::subgroup_blocked: depth = uint64_t(p.block_levels(n)) * (detail::kRows + wg_scan + 3); break;
    case ScanAlgorithm::chained_lookback:
    case ScanAlgorithm::chained_fallback: {
      // Within the tile as reduce_then_scan's rescan; the look-back folds up to one subgroup of aggregates
      // per step into a prefix chained over all earlier tiles.
      const uint64_t vec = p.vec;
      const uint64_t tiles = detail::ceil_div(n, p.chained_shape(n).second);
      depth = vec + detail::kRows + wg_scan + 3 + tiles + sg;
      break;
    }
    default: {
      const uint64_t vec = p.vec;
      const uint64_t tiles = detail::ceil_div(n, p.tile_elements);
      depth = vec + detail::kRows + wg_scan + 3;  // within the tile
      if (tiles > 1)
        depth += detail::kRows * vec + wg_reduce + uint64_t(p.block_levels(tiles)) * (detail::kRows + wg_scan + 3);
      break;
    }
  }
  return depth + windows;
}

VkDeviceSize Scan::statistics_offset() const { return plan_->state_offset; }

void Scan::release_descriptor_sets() const { plan_->descriptors->release(); }

namespace detail {
namespace {

// Whether float results must repeat bit for bit: deterministic with a float type or a user operator (which
// may hold floats), whose combines are not associative bit for bit.
bool needs_fixed_tree(const ScanDesc& desc) {
  return desc.deterministic && (desc.user_operator || !is_integer(desc.type));
}

// automatic: the single-pass chained scan with fallback wherever the Vulkan memory model is enabled, unless
// float results must repeat bit for bit (needs_fixed_tree). In place (desc.in_place), where a fallback could
// re-read an input its owner is overwriting: chained_lookback where the driver gives forward progress, else
// reduce_then_scan.
// User operators: the chained scan for values of at most 16 bytes in plans of at least 2^20 elements, else
// reduce_then_scan: the chained scan measured slower below 2^20 and for larger values with costly combines,
// and a value's size is all a plan knows of its combine (docs/PERFORMANCE.md, User operators).
ScanAlgorithm automatic_algorithm(const ContextImpl& c, const ScanDesc& desc) {
  constexpr uint32_t kUserChainedMaxBytes = 16;
  constexpr uint64_t kUserChainedMinCount = uint64_t(1) << 20;
  const UserOperator* user = desc.user_operator;
  const bool user_chained = user && user->size <= kUserChainedMaxBytes && desc.max_count >= kUserChainedMinCount;
  if (!c.caps.has(feature_memory_model) || needs_fixed_tree(desc) || (user && !user_chained))
    return ScanAlgorithm::reduce_then_scan;
  if (!desc.in_place) return ScanAlgorithm::chained_fallback;
  return lacks_forward_progress(c.caps.driver_id) ? ScanAlgorithm::reduce_then_scan : ScanAlgorithm::chained_lookback;
}

// The algorithm a plan of `desc` runs (desc checked by check_scan_request).
ScanAlgorithm scan_algorithm(const ContextImpl& c, const ScanDesc& desc) {
  return desc.algorithm == ScanAlgorithm::automatic ? automatic_algorithm(c, desc) : desc.algorithm;
}

// The checks of the description alone: its enums, operator or type, max_count, and the requests that
// contradict themselves on any device.
Result<void> check_scan_request(const ContextImpl& c, const ScanDesc& desc) {
  if (int(desc.algorithm) < 0 || int(desc.algorithm) > int(ScanAlgorithm::chained_fallback))
    return make_error(Status::invalid_argument, "Scan: unknown algorithm ", int(desc.algorithm));
  if (desc.kind != ScanKind::inclusive && desc.kind != ScanKind::exclusive)
    return make_error(Status::invalid_argument, "Scan: unknown kind ", int(desc.kind));
  const UserOperator* user = desc.user_operator;
  if (user) {
    if (auto ok = check_user_operator(*user, "Scan"); !ok) return ok;
    if (desc.algorithm != ScanAlgorithm::automatic && desc.algorithm != ScanAlgorithm::reduce_then_scan &&
        !is_chained(desc.algorithm))
      return make_error(Status::invalid_argument, "Scan: user operator ", user->name, " scans with reduce_then_scan, ",
                        "chained_lookback or chained_fallback, not ", to_string(desc.algorithm));
  } else if (auto ok = check_type_op(c, desc.type, desc.op, "Scan"); !ok) {
    return ok;
  }
  if (desc.max_count == 0 || desc.max_count > kMaxCount)
    return make_error(Status::invalid_argument, "Scan: max_count ", desc.max_count, " must be in 1..2^40");
  // deterministic: float operators (and user operators, which may hold floats) are not associative bit for
  // bit, and the chained scans' look-back folds aggregates in whatever grouping the race between tiles
  // leaves. Checked before the memory-model check: the request contradicts itself on any device.
  if (needs_fixed_tree(desc) && is_chained(desc.algorithm))
    return make_error(Status::invalid_argument, "Scan: ", to_string(desc.algorithm), " cannot be deterministic for ",
                      user ? user->name : to_string(desc.type), ": its look-back groups predecessor aggregates by timing, so float "
                      "results may differ in the last bits from run to run; use reduce_then_scan (what automatic "
                      "picks with deterministic) or leave deterministic off");
  if (desc.in_place && desc.algorithm == ScanAlgorithm::chained_fallback)
    return make_error(Status::invalid_argument, "Scan: chained_fallback cannot run in place (in_place is set): a ",
                      "fallback re-reads a predecessor's input, which that predecessor may already be overwriting; ",
                      "leave the algorithm automatic");
  return {};
}

// The checks of the algorithm the plan runs: against the device's features and driver, then which tuning
// overrides it reads.
Result<void> check_scan_algorithm(const ContextImpl& c, const ScanDesc& desc, ScanAlgorithm algorithm) {
  const bool chained = is_chained(algorithm);
  if (chained && !c.caps.has(feature_memory_model))
    return make_error(Status::unsupported, "Scan: ", to_string(algorithm), " needs the vulkanMemoryModel and ",
                      "vulkanMemoryModelDeviceScope features, which the device lacks or the caller did not enable ",
                      "(device_requirements() lists them)");
  // Without forward progress between workgroups only chained_fallback, which stops waiting after
  // fallback_spin_limit polls, is safe: a spinning look-back can hang the device.
  if (algorithm == ScanAlgorithm::chained_lookback && lacks_forward_progress(c.caps.driver_id))
    return make_error(Status::unsupported, "Scan: chained_lookback needs forward progress between workgroups, which ",
                      "this driver (", c.caps.driver_name, ") is known not to give; use chained_fallback");
  // Only the chained scans take overrides.
  const uint32_t reads = chained ? tune_workgroup_size | tune_vectors_per_thread | tune_lookback_windows : 0u;
  if (auto ok = check_tuning("Scan", desc.tuning, reads); !ok)
    return make_error(ok.status(), ok.message(), chained ? "" : std::string(" (") + to_string(algorithm) +
                                                                  " takes no override; only the chained scans do)");
  return {};
}

// Every check of the description, in the order they fire: the request alone, then the algorithm it runs.
Result<void> check_scan_desc(const ContextImpl& c, const ScanDesc& desc) {
  if (auto ok = check_scan_request(c, desc); !ok) return ok;
  return check_scan_algorithm(c, desc, scan_algorithm(c, desc));
}

// What a plan runs: the algorithm and its tile shapes (kChainedTuning, the constants above, and the user
// operators' rules of plan_common.hpp), tuning overrides applied.
struct ScanPolicy {
  ScanAlgorithm algorithm = ScanAlgorithm::reduce_then_scan;
  uint32_t elem = 4;              // bytes per value
  uint32_t vec = 4;               // values per 16-byte vector (a user operator's "vector" is one value)
  uint32_t wg = kWorkgroup;       // invocations per workgroup of every kernel
  uint32_t items = 1;             // chained and reduce_then_scan: vectors per invocation of a tile
  uint32_t narrow_items = 0;      // chained with wide tiles: vectors per invocation of the narrow tile, else 0
  uint64_t wide_from = 0;         // chained with wide tiles: windows of this many elements or more take them
  uint32_t lookback_windows = 0;  // chained: look-back windows per step (LOOK_WINDOWS)
};

// Invocations per workgroup where tuning.workgroup_size leaves the choice to the plan.
uint32_t default_workgroup(ScanAlgorithm algorithm, const ChainedTuning& row) {
  if (is_chained(algorithm)) return row.workgroup_size;
  return algorithm == ScanAlgorithm::reduce_then_scan ? kTileWorkgroup : kWorkgroup;
}

// Whether a chained plan takes the row's wide tile for its large windows: integer chained_fallback plans
// without a vectors_per_thread override, as floats (not settled) and chained_lookback measured slower with
// it (docs/PERFORMANCE.md, Scan).
bool takes_wide_tiles(const ScanDesc& desc, ScanAlgorithm algorithm, const ChainedTuning& row) {
  return row.wide_vectors && !desc.user_operator && is_integer(desc.type) &&
         algorithm == ScanAlgorithm::chained_fallback && !desc.tuning.vectors_per_thread &&
         desc.max_count >= row.wide_from;
}

// The plan's algorithm and tile shapes (desc checked by check_scan_desc). Each shape is the device's or the
// algorithm's default, then a user operator's rule, then the tuning override.
ScanPolicy resolve_scan_policy(const ContextImpl& c, const ScanDesc& desc) {
  const UserOperator* user = desc.user_operator;
  const Tuning& t = desc.tuning;
  const ChainedTuning& row = chained_tuning(c.caps);  // chained tile shapes for this device
  ScanPolicy p;
  p.algorithm = scan_algorithm(c, desc);
  p.elem = user ? user->size : size_of(desc.type);
  p.vec = user ? 1 : 16 / p.elem;
  p.wg = default_workgroup(p.algorithm, row);
  if (user) p.wg = user_workgroup(c, p.wg, p.elem);
  if (t.workgroup_size) p.wg = t.workgroup_size;
  // User operators: blocked tiles of user_items values per invocation.
  if (p.algorithm == ScanAlgorithm::reduce_then_scan) p.items = user ? user_items(p.elem) : kRows;
  if (!is_chained(p.algorithm)) return p;
  const bool wide = takes_wide_tiles(desc, p.algorithm, row);
  p.items = wide ? row.wide_vectors : row.vectors;
  if (user) p.items = user_chained_items(p.elem);
  if (t.vectors_per_thread) p.items = t.vectors_per_thread;
  p.lookback_windows = t.lookback_windows ? t.lookback_windows : row.lookback_windows;
  if (wide) {
    p.narrow_items = row.vectors;
    p.wide_from = row.wide_from;
  }
  return p;
}

// The checks of the resolved chained tile, before any kernel is built: the overrides' ranges, then its
// shared memory against the device's.
Result<void> check_scan_policy(const ContextImpl& c, const ScanDesc& desc, const ScanPolicy& p) {
  if (!is_chained(p.algorithm)) return {};
  if (p.wg < 64 || p.wg > 1024 || (p.wg & (p.wg - 1)) != 0)
    return make_error(Status::invalid_argument, "Scan: tuning.workgroup_size ", p.wg,
                      " must be a power of two from 64 to 1024");
  const UserOperator* user = desc.user_operator;
  const uint32_t max_items = user ? kMaxUserChainedItems : 8;
  if (p.items > max_items)
    return make_error(Status::invalid_argument, "Scan: tuning.vectors_per_thread ", p.items, " exceeds ", max_items);
  if (p.lookback_windows > 8)
    return make_error(Status::invalid_argument, "Scan: tuning.lookback_windows ", p.lookback_windows, " exceeds 8");
  // Shared memory: the workgroup scan's ROW_T per invocation (common/workgroup_scan.glsl), the fallback's
  // workgroup reduction's value per invocation (common/workgroup.glsl) and the look-back words.
  const uint64_t row_values = user ? 1 : kRows;  // ROW_N (common/scan_types.glsl)
  const uint64_t shared_bytes = (uint64_t(p.wg) + 1) * row_values * p.elem + uint64_t(p.wg) * p.elem + 64;
  if (shared_bytes > c.caps.max_shared_memory)
    return make_error(Status::unsupported, "Scan: a ", p.wg, "-invocation chained tile of ",
                      user ? user->name : to_string(desc.type),
                      " needs ", shared_bytes, " bytes of shared memory; the device allows ",
                      c.caps.max_shared_memory);
  return {};
}

// Whether a scan kernel is built with subgroup operations (its subgroup variant where the device and the
// workgroup allow).
constexpr bool kPlain = false, kSubgroups = true;

// Builds a plan's kernels in turn; after the first failure it builds no more and keeps that error.
struct ScanKernels {
  ContextImpl& c;
  const ScanDesc& desc;
  ScanPlan& plan;
  uint32_t look_windows;  // LOOK_WINDOWS of the chained kernels (0 elsewhere)
  Result<void> built{};

  void need(const Kernel*& slot, KernelName name, uint32_t items, bool subgroups) {
    if (!built) return;
    auto k = build(name, items, subgroups);
    if (!k) built = std::move(k).error();
    else slot = k.value();
  }

  Result<const Kernel*> build(KernelName name, uint32_t items, bool subgroups) {
    const UserOperator* user = desc.user_operator;
    KernelDesc kd{name};
    kd.plan = "Scan";
    kd.group = user ? user->kernels : &kShaderGroup_scan;
    if (!user) kd.op = desc.op;
    kd.workgroup_size = plan.wg;
    kd.items = items;
    kd.spec.look_windows = look_windows;
    auto variant = value_variant(c, desc.type, desc.op, user, subgroups, plan.wg);
    if (!variant) return std::move(variant).error();
    kd.variant = variant.value();
    const bool sg = kd.variant.find(".nosg") == std::string::npos;
    if (subgroups) plan.subgroups = sg;
    kd.uses_subgroups = subgroups && sg;
    return get_kernel(c, kd);
  }
};

// The chained kernels by algorithm (lookback, fallback) and tile state: the value in 16-bit parts across
// u32 words, or 64-bit {flag, value} words (one per tile for 32-bit values, one per word of a user
// operator's value; common/tile_state.glsl). The bytes per tile are the same.
constexpr KernelName kChainedKernels[2][2] = {
    {kernel_name("scan/chained_lookback"), kernel_name("scan/chained_lookback64")},
    {kernel_name("scan/chained_fallback"), kernel_name("scan/chained_fallback64")}};

KernelName chained_kernel(const ContextImpl& c, const ScanDesc& desc, ScanAlgorithm algorithm) {
  const bool state64 = state64_enabled(c) && (desc.user_operator || !is_64bit(desc.type));
  return kChainedKernels[algorithm == ScanAlgorithm::chained_fallback][state64];
}

// Builds the kernels of the plan's algorithm, and record_indirect's args kernel where it has that call, and
// sets the block and tile sizes they scan. The first failure is returned.
Result<void> build_scan_kernels(ContextImpl& c, const ScanDesc& desc, const ScanPolicy& policy, ScanPlan& plan) {
  ScanKernels k{c, desc, plan, policy.lookback_windows};
  const uint64_t wg = plan.wg, vec = plan.vec;
  switch (plan.algorithm) {
    case ScanAlgorithm::hillis_steele: k.need(plan.step, kernel_name("scan/hillis_steele"), 1, kPlain); break;
    case ScanAlgorithm::blelloch_global:
      k.need(plan.up, kernel_name("scan/blelloch_upsweep"), 1, kPlain);
      k.need(plan.down, kernel_name("scan/blelloch_downsweep"), 1, kPlain);
      break;
    case ScanAlgorithm::blocked_blelloch:
      k.need(plan.block, kernel_name("scan/blelloch_block"), 1, kPlain);
      k.need(plan.add, kernel_name("scan/add_carry"), 1, kPlain);
      plan.block_elements = 2 * wg;
      break;
    case ScanAlgorithm::subgroup_blocked:
      k.need(plan.block, kernel_name("scan/subgroup_block"), kRows, kSubgroups);
      k.need(plan.add, kernel_name("scan/add_carry"), 1, kPlain);
      plan.block_elements = wg * kRows;
      break;
    case ScanAlgorithm::chained_lookback:
    case ScanAlgorithm::chained_fallback: {
      const KernelName name = chained_kernel(c, desc, plan.algorithm);
      k.need(plan.chained, name, policy.items, kSubgroups);
      plan.tile_elements = wg * policy.items * vec;
      if (policy.narrow_items) {
        k.need(plan.chained_narrow, name, policy.narrow_items, kSubgroups);
        plan.narrow_tile_elements = wg * policy.narrow_items * vec;
        plan.wide_from = policy.wide_from;
      }
      break;
    }
    default: {
      // Tile sums one per invocation for user operators (ROW_N is 1 for them: common/scan_types.glsl).
      const uint32_t block_items = desc.user_operator ? 1 : kRows;
      k.need(plan.tile_reduce, kernel_name("scan/reduce_then_scan_reduce"), policy.items, kSubgroups);
      k.need(plan.tile_scan, kernel_name("scan/reduce_then_scan_scan"), policy.items, kSubgroups);
      k.need(plan.block, kernel_name("scan/subgroup_block"), block_items, kSubgroups);
      k.need(plan.add, kernel_name("scan/add_carry"), 1, kPlain);
      plan.block_elements = wg * block_items;
      plan.tile_elements = wg * policy.items * vec;
      break;
    }
  }
  if (!k.built) return std::move(k.built);
  if (!is_chained(plan.algorithm) && plan.algorithm != ScanAlgorithm::reduce_then_scan) return {};
  auto args = indirect_args_kernel(c, "Scan");
  if (!args) return std::move(args).error();
  plan.args_kernel = args.value();
  return {};
}

// Elements a window is a whole number of: the plan's tile, else its block, else its workgroup.
uint64_t window_granule(const ScanPlan& plan) {
  if (plan.tile_elements) return plan.tile_elements;
  if (plan.block_elements) return plan.block_elements;
  return plan.wg;
}

// Elements of each scratch region for a window of n elements: Hillis-Steele's two ping-pong arrays,
// Blelloch's power-of-two working array, or the sums of every block level but the top (reduce_then_scan:
// after its tile sums). The chained tile state is placed apart.
std::vector<uint64_t> region_elements(const ScanPlan& plan, uint64_t n) {
  std::vector<uint64_t> regions;
  auto block_sums = [&](uint64_t m) {
    for (uint64_t b = ceil_div(m, plan.block_elements); b > 1; b = ceil_div(b, plan.block_elements))
      regions.push_back(b);
  };
  switch (plan.algorithm) {
    case ScanAlgorithm::hillis_steele: regions = {n, n}; break;
    case ScanAlgorithm::blelloch_global: regions = {uint64_t(1) << std::max<uint32_t>(1, ceil_log2(n))}; break;
    case ScanAlgorithm::blocked_blelloch:
    case ScanAlgorithm::subgroup_blocked: block_sums(n); break;
    case ScanAlgorithm::chained_lookback:
    case ScanAlgorithm::chained_fallback: break;
    default: {
      const uint64_t tiles = ceil_div(n, plan.tile_elements);
      if (tiles > 1) {
        regions.push_back(tiles);
        block_sums(tiles);
      }
      break;
    }
  }
  return regions;
}

// Lays out scratch for max_count: the window, then the regions, the chained tile state, the two carry slots
// (windowed plans) and record_indirect's args region.
void lay_out_scan_scratch(const ContextImpl& c, ScanPlan& plan) {
  plan.window = window_elements(c, plan.elem, window_granule(plan));
  if (plan.algorithm == ScanAlgorithm::blelloch_global) {
    // The working array is the window rounded up to a power of two: keep windows powers of two.
    uint64_t pow2 = 1;
    while (pow2 * 2 <= plan.window) pow2 *= 2;
    plan.window = pow2;
  }
  plan.scratch_align = binding_alignment(c);
  const VkDeviceSize granule_bytes = region_granule(plan.scratch_align, plan.elem);
  // Level sizes only shrink with the count, so those of min(max_count, window) bound every smaller count.
  const uint64_t n = std::min(plan.desc.max_count, plan.window);
  VkDeviceSize offset = 0;
  for (uint64_t r : region_elements(plan, n)) {
    plan.region_offset.push_back(offset);
    plan.region_bytes.push_back(align_up(r * plan.elem, granule_bytes));
    offset += plan.region_bytes.back();
  }
  if (is_chained(plan.algorithm)) {
    const uint64_t tiles = plan.chained_max_tiles(n);
    // 4 or 2 u32 parts, or one u64 word; a user operator's value takes 2 parts (or one u64 word) per word.
    const UserOperator* user = plan.desc.user_operator;
    plan.state_tile_bytes = user ? 8 * user->words : (is_64bit(plan.desc.type) ? 16 : 8);
    plan.state_offset = offset;
    plan.state_bytes = align_up(kStateHeaderBytes + tiles * plan.state_tile_bytes, granule_bytes);
    offset += plan.state_bytes;
  }
  if (plan.desc.max_count > plan.window) {
    plan.carry_offset = offset;
    plan.carry_bytes = align_up(2 * plan.elem, granule_bytes);
    offset += plan.carry_bytes;
  }
  plan.indirect_offset = offset;
  plan.scratch_bytes = offset + align_up(kIndirectRegionBytes, granule_bytes);
}

}  // namespace
}  // namespace detail

// Validate the description, resolve the algorithm and its tiles, check those against the device, build the
// kernels, lay out scratch; the checks fire in that order.
Result<Scan> Scan::create(Context& context, const ScanDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_scan_desc(c, desc); !ok) return ok.error();
  const detail::ScanPolicy policy = detail::resolve_scan_policy(c, desc);
  if (auto ok = detail::check_scan_policy(c, desc, policy); !ok) return ok.error();
  auto plan = std::make_unique<detail::ScanPlan>();
  plan->context = &c;
  plan->desc = desc;
  plan->algorithm = policy.algorithm;
  plan->elem = policy.elem;
  plan->vec = policy.vec;
  plan->wg = policy.wg;
  if (auto ok = detail::build_scan_kernels(c, desc, policy, *plan); !ok) return ok.error();
  detail::lay_out_scan_scratch(c, *plan);
  plan->descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return Scan(std::move(plan));
}

namespace detail {
namespace {

// The buffer checks of record (n = count) and record_indirect (n = max_count, the most it may touch).
Result<void> check_buffers(const ScanPlan& p, const char* call, const BufferRange& input, const BufferRange& output,
                           uint64_t n, const BufferRange& scratch, const ScratchRequirements& need) {
  const VkDeviceSize bytes = n * p.elem;
  if (auto ok = check_range(input, bytes, p.elem, "input", n > 0); !ok) return with_call(ok, call);
  if (auto ok = check_range(output, bytes, p.elem, "output", n > 0); !ok) return with_call(ok, call);
  if (auto ok = check_scratch(scratch, need, call); !ok) return ok;
  if (n == 0) return {};
  const bool in_place = input.buffer == output.buffer && input.offset == output.offset;
  if (in_place && p.algorithm == ScanAlgorithm::chained_fallback)
    return make_error(Status::invalid_argument, call,
                      ": chained_fallback cannot run in place: a fallback re-reads a predecessor's input, "
                      "which that predecessor may already be overwriting (create the plan with ScanDesc::in_place, "
                      "and automatic picks an algorithm that can)");
  if (!in_place && overlaps(input, bytes, output, bytes))
    return make_error(Status::invalid_argument, call,
                      ": input and output ranges partially overlap (in place needs the same buffer and offset)");
  if (overlaps(scratch, need.size, output, bytes))
    return make_error(Status::invalid_argument, call, ": scratch and output ranges overlap");
  if (overlaps(scratch, need.size, input, bytes))
    return make_error(Status::invalid_argument, call, ": scratch and input ranges overlap");
  return {};
}

}  // namespace
}  // namespace detail

Result<void> Scan::record(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output, uint64_t count,
                          const BufferRange& scratch) const {
  const detail::ScanPlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  const ScratchRequirements need = scratch_requirements();
  if (count > p.desc.max_count)
    return make_error(Status::invalid_argument, "Scan::record: count ", count, " exceeds max_count ", p.desc.max_count);
  if (auto ok = detail::check_buffers(p, "Scan::record", input, output, count, scratch, need); !ok) return ok;
  std::vector<detail::Pass> passes;
  if (count > 0) detail::PassBuilder(p, input, output, scratch, passes).scan(count);
  return detail::record_passes(c, *p.descriptors, cmd, passes, "Scan", "record");
}

Result<void> Scan::record_indirect(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                                   const BufferRange& count_buffer, const BufferRange& scratch) const {
  const detail::ScanPlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  if (!p.args_kernel)
    return make_error(Status::unsupported, "Scan::record_indirect: ", to_string(p.algorithm),
                      " sizes its passes from the count on the CPU; chained_lookback, chained_fallback and "
                      "reduce_then_scan (the algorithms automatic picks) take the count from the GPU");
  const uint64_t max_count = p.desc.max_count;
  const uint64_t max_tiles = detail::ceil_div(max_count, p.tile_elements);
  if (auto ok = detail::check_indirect_limits(c, max_count, p.window, max_tiles, "Scan"); !ok) return ok;
  const ScratchRequirements need = scratch_requirements();
  const VkDeviceSize bytes = max_count * p.elem;
  if (auto ok = detail::check_count_buffer(count_buffer, "Scan::record_indirect"); !ok) return ok;
  if (auto ok = detail::check_buffers(p, "Scan::record_indirect", input, output, max_count, scratch, need); !ok)
    return ok;
  if (detail::overlaps(scratch, need.size, count_buffer, 4) || detail::overlaps(output, bytes, count_buffer, 4))
    return make_error(Status::invalid_argument, "Scan::record_indirect: the count buffer overlaps scratch or output");

  const detail::BoundBuffer region{scratch.buffer, scratch.offset + p.indirect_offset, detail::kIndirectRegionBytes};
  std::vector<detail::IndirectEntry> entries = {{uint32_t(p.tile_elements), 0, 0, 0}};
  if (p.algorithm == ScanAlgorithm::reduce_then_scan) {
    // Tile sums scanned in at most two block levels: entry 1 = blocks of tile sums, entry 2 = the top.
    const uint64_t blocks = detail::ceil_div(max_tiles, p.block_elements);
    if (blocks > p.block_elements)
      return make_error(Status::unsupported, "Scan::record_indirect: reduce_then_scan of max_count ", max_count,
                        " needs more than two levels of tile sums; at most ", p.tile_elements * p.block_elements *
                        p.block_elements, " elements are supported indirectly");
    entries.push_back({uint32_t(p.block_elements), 0, 0, 1});
    entries.push_back({uint32_t(p.block_elements), 0, 0, 2});
  }
  std::vector<detail::Pass> passes;
  passes.push_back(detail::make_indirect_args_pass(c, p.args_kernel, count_buffer, region, max_count, entries));
  detail::PassBuilder builder(p, input, output, scratch, passes);
  builder.set_indirect(region);
  builder.scan(max_count);
  return detail::record_passes(c, *p.descriptors, cmd, passes, "Scan", "record_indirect");
}

}  // namespace vkprim
