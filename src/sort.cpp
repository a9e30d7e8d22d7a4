// RadixSort: stable LSD radix sort with 8-bit digits (shaders/sort, shaders/common/radix.glsl).
//   onesweep: Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs" (2022),
//     with the decoupled fallback of Smith, Levien & Owens, "Decoupled Fallback" (SPAA 2025).
//   reduce_then_scan: the classic upsweep / scan / downsweep per digit (e.g. Merrill & Grimshaw, "High
//     Performance and Scalable Radix Sorting", 2011), with a fixed number of workgroups per pass.
//
// In place: pass p reads the caller's buffers when p is even and scratch's ping-pong copy when odd, and
// writes the other; an odd number of passes ends with a copy back from scratch.
//
// Scratch layout (each part at a binding-aligned offset):
//   meta: 16 header words (onesweep tickets per pass, statistics), 8 x 256 digit histograms (onesweep),
//         then onesweep's tile state (256 words per tile) or reduce_then_scan's 256 digit
//         totals followed by the 256 x G digit table;
//   the ping-pong keys, the ping-pong values, the record_indirect region.
#include "vkprim/sort.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "shader_groups.hpp"
#include "indirect.hpp"
#include "plan_common.hpp"
#include "vkprim/version.hpp"

namespace vkprim {

const char* to_string(SortOrder o) {
  switch (o) {
    case SortOrder::ascending: return "ascending";
    case SortOrder::descending: return "descending";
  }
  return "unknown";
}

bool parse(const char* name, SortOrder& out) { return detail::parse_enum(name, SortOrder::descending, out); }

const char* to_string(SortAlgorithm a) {
  switch (a) {
    case SortAlgorithm::automatic: return "automatic";
    case SortAlgorithm::onesweep: return "onesweep";
    case SortAlgorithm::reduce_then_scan: return "reduce_then_scan";
  }
  return "unknown";
}

bool parse(const char* name, SortAlgorithm& out) {
  return detail::parse_enum(name, SortAlgorithm::reduce_then_scan, out);
}

const char* to_string(SortRanking r) {
  switch (r) {
    case SortRanking::automatic: return "automatic";
    case SortRanking::ballots: return "ballots";
    case SortRanking::partitioned: return "partitioned";
  }
  return "unknown";
}

bool parse(const char* name, SortRanking& out) { return detail::parse_enum(name, SortRanking::partitioned, out); }

const char* to_string(SortScatter s) {
  switch (s) {
    case SortScatter::automatic: return "automatic";
    case SortScatter::staged: return "staged";
    case SortScatter::direct: return "direct";
  }
  return "unknown";
}

bool parse(const char* name, SortScatter& out) { return detail::parse_enum(name, SortScatter::direct, out); }

namespace detail {

namespace {

constexpr uint32_t kDigits = 256;
constexpr uint32_t kHeaderWords = 16;
constexpr uint32_t kRegionWord = kHeaderWords + 8 * kDigits;  // META_REGION of common/radix.glsl
constexpr uint64_t kMaxSortCount = (uint64_t(1) << 30) - 1;   // onesweep's 30-bit tile-state counts
constexpr uint32_t kMaxValueBytes = 64;
constexpr uint32_t kCopyGroupsCap = 4096;
// Iterations one workgroup's grid-stride loop may take (llvmpipe ends any loop after 65535).
constexpr uint64_t kMaxLoopTrips = 32768;
// Shared memory per onesweep workgroup up to which NVIDIA's driver runs two per multiprocessor (create()).
constexpr uint64_t kTwoPerSmShared = 24 * 1024;

// Key transform bits (specialization constant KEY_FLAGS) and push-constant flag bits of common/radix.glsl.
enum : uint32_t { kSigned = 1u, kFloat = 2u, kDescending = 4u, kIndirect = 8u };
// KEY_FLAGS bit of the onesweep kernels of tiles up to kPartialTileKeys keys: they may take per-workgroup
// histograms (SORT_HIST_PARTIALS). Larger tiles are built without that code, which slows their digit passes
// (docs/PERFORMANCE.md, Small sorts).
constexpr uint32_t kHistPartials = 16u;
constexpr uint64_t kPartialTileKeys = 2048;
// The one rule for both sides: which kernels are built with the code, and which records may use it (a record
// that set hist_partials on a kernel without it would skip the clear its atomics need).
constexpr bool takes_partials(uint64_t tile_keys) { return tile_keys <= kPartialTileKeys; }
constexpr uint32_t partials_mode(uint64_t tile_keys) { return takes_partials(tile_keys) ? kHistPartials : 0u; }

// record_indirect entries (src/indirect.hpp).
enum : uint32_t { kEntryTiles = 0, kEntryHistogram = 1, kEntryGroups = 2, kEntryCopy = 3 };

}  // namespace

struct SortPlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  SortDesc desc;
  SortAlgorithm algorithm = SortAlgorithm::reduce_then_scan;
  SortRanking ranking = SortRanking::ballots;
  SortScatter scatter = SortScatter::staged;
  uint32_t key_bytes = 4, value_bytes = 0;
  // Values wider than 8 bytes: units of value_unit words (4 where the size is a multiple of 16, else 1),
  // value_units per value (VALUE_UNITS of common/radix.glsl); 0 for 0, 4 and 8 bytes.
  uint32_t value_unit = 0, value_units = 0;
  uint32_t begin_bit = 0, end_bit = 32, passes = 4;
  uint32_t wg = 256, items = 8;
  uint32_t stage_rounds = 1;  // onesweep: STAGE_ROUNDS of common/radix.glsl
  uint64_t tile = 2048;
  uint32_t min_sg = 0;  // the subgroup size the plan's tile ranks with (ranking_subgroup), 0: the emulation
  uint32_t histogram_groups_cap = 256;  // onesweep upfront histogram
  // Onesweep's per-workgroup histograms (common/radix.glsl, hist_partials): where a direct record has at
  // most two tiles per slot, up to partial_slots histogram workgroups store their counts at meta word
  // partials_word, the first digit pass sums them, and no clear precedes the histogram (0 slots: never):
  // one dispatch fewer for small sorts (docs/PERFORMANCE.md, Small sorts).
  uint32_t partials_word = 0, partial_slots = 0;
  uint32_t groups_cap = 1024;           // reduce_then_scan workgroups per pass (digit-table width)
  const Kernel* histogram = nullptr;
  const Kernel* onesweep = nullptr;
  const Kernel* upsweep = nullptr;
  const Kernel* scan = nullptr;
  const Kernel* downsweep = nullptr;
  const Kernel* copy = nullptr;
  const Kernel* args = nullptr;
  // The one-workgroup sorts (sort/single.comp) of counts up to single_keys (0: none): automatic plans of keys
  // with no payload or a 4- or 8-byte one, tile shape and ranking not overridden. A ladder of tiles, smallest
  // first: a count takes the first that holds it (kernels are built only up to the one max_count takes).
  struct Single {
    uint64_t keys = 0;
    const Kernel* kernel = nullptr;
    uint32_t wg = 0, items = 0, min_sg = 0;  // the tile, ranked with subgroups of min_sg (0: the emulation)
  };
  std::vector<Single> singles;
  uint64_t single_keys = 0;
  // Onesweep's smaller tiles for small counts (automatic plans, as the one-workgroup sort): a count takes the
  // first whose up_to holds it, else `onesweep` at `tile`. record_indirect chooses by max_count.
  // Each has its own upfront histogram kernel of the same shape, so that the histogram spreads over as many
  // workgroups as the digit passes have tiles.
  struct SmallTile {
    uint64_t up_to = 0, tile = 0;
    const Kernel* kernel = nullptr;
    const Kernel* histogram = nullptr;
    uint32_t wg = 0, items = 0, min_sg = 0;
  };
  std::vector<SmallTile> small_tiles;
  VkDeviceSize align = 16;
  VkDeviceSize meta_offset = 0, meta_bytes = 0;
  VkDeviceSize keys_offset = 0, keys_bytes = 0;
  VkDeviceSize values_offset = 0, values_bytes = 0;
  VkDeviceSize indirect_offset = 0;
  VkDeviceSize scratch_bytes = 0;
  std::unique_ptr<DescriptorSets> descriptors;

  uint32_t key_flags() const {
    uint32_t f = 0;
    if (desc.key_type == DataType::i32 || desc.key_type == DataType::i64) f |= kSigned;
    if (desc.key_type == DataType::f32 || desc.key_type == DataType::f64) f |= kFloat;
    if (desc.order == SortOrder::descending) f |= kDescending;
    return f;
  }
  uint64_t tiles_for(uint64_t n) const { return ceil_div(n, tile); }
  // The onesweep digit-pass kernel and tile for a count of n (small_tiles above).
  SmallTile onesweep_for(uint64_t n) const {
    for (const SmallTile& s : small_tiles)
      if (n <= s.up_to) return s;
    return {n, tile, onesweep, histogram};
  }
  bool one_workgroup(uint64_t n) const { return n <= single_keys; }
  // Upfront histogram workgroups for n keys in tiles of `keys` (onesweep_for(n).tile).
  uint64_t histogram_groups(uint64_t n, uint64_t keys) const {
    return std::min<uint64_t>(ceil_div(n, keys), histogram_groups_cap);
  }
  uint64_t groups_for(uint64_t n) const { return std::min<uint64_t>(tiles_for(n), groups_cap); }
  uint64_t copy_groups(uint64_t n) const { return std::min<uint64_t>(ceil_div(n, wg), kCopyGroupsCap); }
};

namespace {

// Builds the passes of one record() / record_indirect() call. `count` is the CPU count (direct) or
// max_count (indirect: groups then come from the args pass).
class SortPassBuilder {
 public:
  SortPassBuilder(const SortPlan& p, const BufferRange& keys, const BufferRange& values, const BufferRange& scratch,
                  std::vector<Pass>& passes, bool indirect)
      : p_(p), c_(*p.context), keys_(keys), values_(p.value_bytes ? values : keys), scratch_(scratch),
        passes_(passes), indirect_(indirect) {}

  // The one-workgroup sort: in place, every digit pass in one dispatch (count from the args region when
  // indirect: pass() reads entry kEntryGroups for passes dispatched directly).
  void single(uint64_t count) {
    const Kernel* k = nullptr;
    for (const SortPlan::Single& s : p_.singles)
      if (!k && count <= s.keys) k = s.kernel;
    pass(k, "one workgroup", -1, 1, count, keys_, keys_, values_, values_, p_.begin_bit, p_.passes << 16);
  }

  // The passes for `count`: the one-workgroup sort where it takes the count, else the digit passes.
  void build(uint64_t count) {
    if (p_.one_workgroup(count)) single(count);
    else sort(count);
  }

  void sort(uint64_t count) {
    const BufferRange alt_keys{scratch_.buffer, scratch_.offset + p_.keys_offset, p_.keys_bytes};
    const BufferRange alt_values =
        p_.value_bytes ? BufferRange{scratch_.buffer, scratch_.offset + p_.values_offset, p_.values_bytes} : alt_keys;
    const SortPlan::SmallTile t = p_.onesweep_for(count);  // onesweep: the histogram's and every digit pass's
    // Per-workgroup histograms (direct records, tiles of kernels built for them) where they need no more than
    // two tiles per workgroup.
    const bool partials = !indirect_ && p_.partial_slots && takes_partials(t.tile) &&
                          ceil_div(count, t.tile) <= 2 * uint64_t(p_.partial_slots);
    uint64_t hist_groups = p_.histogram_groups(count, t.tile);
    if (partials) hist_groups = std::min<uint64_t>(hist_groups, p_.partial_slots);
    if (p_.algorithm == SortAlgorithm::onesweep) {
      Pass& h = pass(t.histogram, "onesweep histogram", kEntryHistogram, hist_groups, count, keys_, alt_keys,
                     values_, alt_values, p_.begin_bit, p_.passes << 16);
      h.push[6] = uint32_t(t.tile);  // the tile states it fills are the digit passes'
      if (partials) {
        h.push[8] = p_.partials_word;
      } else {
        h.fill_before = true;
        h.fill = {scratch_.buffer, scratch_.offset + p_.meta_offset, VkDeviceSize(kRegionWord) * 4};
        h.fill_word = 0;
      }
    }
    for (uint32_t d = 0; d < p_.passes; ++d) {
      const bool even = d % 2 == 0;
      const BufferRange& kin = even ? keys_ : alt_keys;
      const BufferRange& kout = even ? alt_keys : keys_;
      const BufferRange& vin = even ? values_ : alt_values;
      const BufferRange& vout = even ? alt_values : values_;
      const uint32_t bit = p_.begin_bit + 8 * d;
      const std::string digit = " digit " + std::to_string(d);
      if (p_.algorithm == SortAlgorithm::onesweep) {
        const uint64_t tiles = ceil_div(count, t.tile);
        Pass& o = pass(t.kernel, ("onesweep" + digit).c_str(), kEntryTiles, tiles, count, kin, kout, vin, vout, bit,
                       d << 8);
        o.push[6] = c_.spin_limit();
        o.push[7] = detail::chained_knobs(c_, true, tiles);
        if (partials && d == 0) {  // its tile 0 stores the totals the later passes read
          o.push[8] = p_.partials_word;
          o.push[11] = uint32_t(hist_groups) | p_.passes << 16;
        }
      } else {
        const uint64_t groups = p_.groups_for(count);
        pass(p_.upsweep, ("reduce_then_scan upsweep" + digit).c_str(), kEntryGroups, groups, count, kin, kout, vin,
             vout, bit, 0);
        Pass& s = pass(p_.scan, ("reduce_then_scan scan" + digit).c_str(), -1, kDigits, count, kin, kout, vin, vout,
                       bit, 0);
        s.push[1] = uint32_t(groups);  // the digit table's width
        s.push[9] = kEntryGroups;
        pass(p_.downsweep, ("reduce_then_scan downsweep" + digit).c_str(), kEntryGroups, groups, count, kin, kout, vin,
             vout, bit, 0);
      }
    }
    if (p_.passes % 2 == 1)
      pass(p_.copy, "copy back", kEntryCopy, p_.copy_groups(count), count, alt_keys, keys_, alt_values, values_, 0, 0);
  }

 private:
  // entry: the record_indirect entry giving the pass's workgroups (-1: dispatched directly with `groups`).
  Pass& pass(const Kernel* kernel, const char* what, int32_t entry, uint64_t groups, uint64_t count,
             const BufferRange& kin, const BufferRange& kout, const BufferRange& vin, const BufferRange& vout,
             uint32_t bit, uint32_t flags) {
    const uint64_t n = std::max<uint64_t>(count, 1);
    const auto bk_in = bind_elements(c_, kin, 0, n, p_.key_bytes);
    const auto bk_out = bind_elements(c_, kout, 0, n, p_.key_bytes);
    const uint32_t vb = p_.value_bytes ? p_.value_bytes : p_.key_bytes;
    const auto bv_in = bind_elements(c_, vin, 0, n, vb);
    const auto bv_out = bind_elements(c_, vout, 0, n, vb);
    Pass pass;
    pass.kernel = kernel;
    pass.buffers[0] = bk_in.bound;
    pass.buffers[1] = bk_out.bound;
    pass.buffers[2] = bv_in.bound;
    pass.buffers[3] = bv_out.bound;
    pass.buffers[4] = {scratch_.buffer, scratch_.offset + p_.meta_offset, p_.meta_bytes};
    pass.buffers[5] = indirect_ ? BoundBuffer{scratch_.buffer, scratch_.offset + p_.indirect_offset, kIndirectRegionBytes}
                                : pass.buffers[4];  // statically used, never read by a direct pass
    const uint32_t shifts = bk_in.shift | (bk_out.shift << 8) | (bv_in.shift << 16) | (bv_out.shift << 24);
    if (indirect_ && entry >= 0) flags |= kIndirect | (uint32_t(entry) << 24);
    if (indirect_ && entry < 0) flags |= kIndirect | (uint32_t(kEntryGroups) << 24);
    pass.push = {};
    // digit_mask: the digit at `bit` is up to 8 bits wide, fewer before end_bit (common/radix.glsl).
    const uint32_t digit_mask = (1u << (bit < p_.end_bit ? std::min(8u, p_.end_bit - bit) : 0u)) - 1u;
    const uint32_t words[12] = {uint32_t(count), uint32_t(groups), shifts, bit, p_.end_bit, flags, 0, 0, 0, 0,
                                digit_mask, 0};
    std::copy(std::begin(words), std::end(words), pass.push.begin());
    pass.groups = groups;
    if (indirect_ && entry >= 0) {
      pass.indirect_entry = entry;
      pass.indirect_region = pass.buffers[5];
    }
    pass.label = std::string("vkprim sort/") + what;
    passes_.push_back(std::move(pass));
    return passes_.back();
  }

  const SortPlan& p_;
  ContextImpl& c_;
  BufferRange keys_, values_, scratch_;
  std::vector<Pass>& passes_;
  bool indirect_;
};

}  // namespace

// Every check of a SortDesc on its own and against the device's features, before any choice is made.
Result<void> check_sort_desc(const SortDesc& desc, const Capabilities& caps) {
  if (int(desc.algorithm) < 0 || int(desc.algorithm) > int(SortAlgorithm::reduce_then_scan))
    return make_error(Status::invalid_argument, "RadixSort: unknown algorithm ", int(desc.algorithm));
  if (desc.order != SortOrder::ascending && desc.order != SortOrder::descending)
    return make_error(Status::invalid_argument, "RadixSort: unknown order ", int(desc.order));
  if (int(desc.ranking) < 0 || int(desc.ranking) > int(SortRanking::partitioned))
    return make_error(Status::invalid_argument, "RadixSort: unknown ranking ", int(desc.ranking));
  if (int(desc.scatter) < 0 || int(desc.scatter) > int(SortScatter::direct))
    return make_error(Status::invalid_argument, "RadixSort: unknown scatter ", int(desc.scatter));
  if (!known_type(desc.key_type))
    return make_error(Status::invalid_argument, "RadixSort: unknown key type ", int(desc.key_type));
  if (desc.value_size % 4 != 0 || desc.value_size > kMaxValueBytes)
    return make_error(Status::invalid_argument, "RadixSort: value_size ", desc.value_size,
                      " must be 0 (keys only) or a multiple of 4 bytes up to ", kMaxValueBytes);
  if (desc.max_count == 0 || desc.max_count > kMaxSortCount)
    return make_error(Status::invalid_argument, "RadixSort: max_count ", desc.max_count,
                      " must be in 1..2^30-1 (onesweep's tile state packs 30-bit counts)");
  const uint32_t key_bits = 8 * size_of(desc.key_type);
  const uint32_t end_bit = desc.end_bit ? desc.end_bit : key_bits;
  if (end_bit > key_bits || desc.begin_bit >= end_bit)
    return make_error(Status::invalid_argument, "RadixSort: bits [", desc.begin_bit, ", ", end_bit,
                      ") must satisfy begin_bit < end_bit <= ", key_bits, " for ", to_string(desc.key_type), " keys");
  if (auto ok = check_tuning("RadixSort", desc.tuning, tune_workgroup_size | tune_items_per_thread);
      !ok)
    return ok.error();
  if (is_64bit(desc.key_type) && !caps.has(feature_int64))
    return make_error(Status::unsupported, "RadixSort: ", to_string(desc.key_type), " keys need shaderInt64, which ",
                      "the device lacks or the caller did not enable");
  if (desc.key_type == DataType::u8 && !caps.has(feature_storage_8bit))
    return make_error(Status::unsupported, "RadixSort: u8 keys need storageBuffer8BitAccess (feature_storage_8bit), ",
                      "which the device lacks or the caller did not enable");
  if (desc.key_type == DataType::u16 && !caps.has(feature_storage_16bit))
    return make_error(Status::unsupported, "RadixSort: u16 keys need storageBuffer16BitAccess ",
                      "(feature_storage_16bit), which the device lacks or the caller did not enable");
  // Partitioned ranking and direct scatter are built for 32- and 64-bit keys (shaders/kernels.cmake).
  const bool narrow_keys = size_of(desc.key_type) < 4;
  if (narrow_keys && (desc.ranking == SortRanking::partitioned || desc.scatter == SortScatter::direct))
    return make_error(Status::unsupported, "RadixSort: ", to_string(desc.key_type), " keys sort with ballot ranking ",
                      "and the staged scatter only (SortRanking::partitioned and SortScatter::direct take 32- and ",
                      "64-bit keys)");
  return {};
}

}  // namespace detail

using detail::make_error;

RadixSort::RadixSort(std::unique_ptr<detail::SortPlan> plan) : plan_(std::move(plan)) {}
RadixSort::RadixSort(RadixSort&&) noexcept = default;
RadixSort& RadixSort::operator=(RadixSort&&) noexcept = default;
RadixSort::~RadixSort() = default;

const SortDesc& RadixSort::desc() const { return plan_->desc; }
SortAlgorithm RadixSort::algorithm() const { return plan_->algorithm; }
SortRanking RadixSort::ranking() const { return plan_->ranking; }
SortScatter RadixSort::scatter() const { return plan_->scatter; }
uint32_t RadixSort::digit_passes() const { return plan_->passes; }
uint64_t RadixSort::keys_per_tile() const { return plan_->tile; }
uint64_t RadixSort::keys_per_tile(uint64_t count) const {
  return plan_->algorithm == SortAlgorithm::onesweep ? plan_->onesweep_for(count).tile : plan_->tile;
}
uint64_t RadixSort::one_workgroup_keys() const { return plan_->single_keys; }
uint32_t RadixSort::staging_rounds() const { return plan_->stage_rounds; }

ScratchRequirements RadixSort::scratch_requirements() const {
  // Onesweep clears its header with vkCmdFillBuffer; record_indirect dispatches from an args region.
  return {plan_->scratch_bytes, plan_->align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}

uint32_t RadixSort::dispatch_count(uint64_t count) const {
  if (count <= 1) return 0;
  if (plan_->one_workgroup(count)) return 1;
  std::vector<detail::Pass> passes;
  const BufferRange none{};
  detail::SortPassBuilder(*plan_, none, none, none, passes, false).sort(std::min(count, plan_->desc.max_count));
  return uint32_t(passes.size());
}

VkDeviceSize RadixSort::statistics_offset() const { return plan_->meta_offset + 8 * 4; }

void RadixSort::release_descriptor_sets() const { plan_->descriptors->release(); }

namespace detail {
namespace {

// The tile of automatic plans, no tuning: the first row matching the device class, the algorithm and the
// payload applies (docs/PERFORMANCE.md, Radix sort). NVIDIA runs onesweep workgroups two or three to a
// multiprocessor only within about 48 KiB of shared memory (kTwoPerSmShared), so the GPU onesweep tiles are
// the largest that stage in two rounds within 24 KiB and keep the registers of that occupancy.
enum class Payload { any, keys, values32, bytes8, gathered };
struct TileRow {
  bool cpu;
  SortAlgorithm algorithm;  // automatic: either
  Payload payload;
  uint32_t workgroup_size, items;
};
constexpr TileRow kTileShapes[] = {
    {true, SortAlgorithm::automatic, Payload::any, 256, 8},  // lavapipe: 32 KiB of shared memory
    {false, SortAlgorithm::onesweep, Payload::keys, 384, 18},
    {false, SortAlgorithm::onesweep, Payload::values32, 384, 22},
    {false, SortAlgorithm::onesweep, Payload::bytes8, 384, 14},    // 8-byte keys or values
    {false, SortAlgorithm::onesweep, Payload::gathered, 384, 12},  // values over 8 bytes
    {false, SortAlgorithm::automatic, Payload::any, 512, 8},
};
// Where a row's workgroup exceeds the device's limit, or the plan overrides the tile.
constexpr uint32_t kFallbackWorkgroup = 256, kDefaultItems = 8;

// Onesweep's smaller tiles for small counts, in workgroups of 512 (CPU drivers 256): keys per invocation,
// and the tiles up to which a count takes them (docs/PERFORMANCE.md, Small sorts). A tile's serial work sets
// the time while there are too few tiles to fill the GPU.
struct SmallTileRow {
  uint32_t items, max_tiles;
};
constexpr SmallTileRow kSmallTiles[] = {{4, 64}, {8, 256}};

// The one-workgroup sort's ladder, smallest tile first: a count takes the first rung that holds it, the
// fewest keys per invocation (each subgroup ranks its rows one after another). 16 keys per invocation only
// where onesweep has no smaller tiles (docs/PERFORMANCE.md, Small sorts).
struct SingleRow {
  uint32_t workgroup_size, items;
};
constexpr SingleRow kSingleLadder[] = {{256, 4}, {512, 4}, {256, 8}, {512, 8}, {256, 16}, {512, 16}};

Payload payload_of(const SortPlan& p) {
  if (p.value_units) return Payload::gathered;
  if (std::max(p.key_bytes, p.value_bytes) == 8) return Payload::bytes8;
  return p.value_bytes ? Payload::values32 : Payload::keys;
}

const TileRow& tile_row(bool cpu, SortAlgorithm algorithm, Payload payload) {
  for (const TileRow& r : kTileShapes)
    if (r.cpu == cpu && (r.algorithm == SortAlgorithm::automatic || r.algorithm == algorithm) &&
        (r.payload == Payload::any || r.payload == payload))
      return r;
  return kTileShapes[std::size(kTileShapes) - 1];
}

// Shared memory of a ranking kernel (common/radix.glsl, onesweep.comp) for a group x items tile staged in
// `rounds` rounds (STAGE_ROUNDS: a round holds 1/rounds of the tile). min_sg: the smallest subgroup, 0 for
// the emulation; running: reduce_then_scan's downsweep (its s_running).
uint64_t ranking_shared_bytes(const SortPlan& p, uint64_t group, uint32_t items, uint32_t rounds, uint64_t min_sg,
                              bool running) {
  // Staged words per key: the key, or a 4- or 8-byte value; wide values are gathered through one in-tile
  // source index per position, so they need no more than the keys.
  const uint64_t stage_width = std::max<uint64_t>(p.key_bytes == 8 ? 2 : 1, p.value_units ? 0 : p.value_bytes / 4);
  return radix_ranking_shared_bytes(stage_width, group, items, rounds, min_sg, running ? kDigits : 0);
}

// The algorithm, digit passes, ranking and scatter; refuses what the device or the build cannot run.
Result<void> resolve_sort_algorithm(const ContextImpl& c, const SortDesc& desc, SortPlan& plan) {
  const bool memory_model = c.caps.has(feature_memory_model);
  plan.algorithm = desc.algorithm;
  // Onesweep wherever it can run (docs/PERFORMANCE.md, Radix sort).
  if (desc.algorithm == SortAlgorithm::automatic)
    plan.algorithm = memory_model ? SortAlgorithm::onesweep : SortAlgorithm::reduce_then_scan;
  if (plan.algorithm == SortAlgorithm::onesweep && !memory_model)
    return make_error(Status::unsupported, "RadixSort: onesweep needs the vulkanMemoryModel and ",
                      "vulkanMemoryModelDeviceScope features, which the device lacks or the caller did not enable ",
                      "(device_requirements() lists them); use reduce_then_scan");
  plan.key_bytes = size_of(desc.key_type);
  plan.value_bytes = desc.value_size;
  if (plan.value_bytes > 8) {
    plan.value_unit = plan.value_bytes % 16 == 0 ? 4 : 1;
    plan.value_units = plan.value_bytes / (4 * plan.value_unit);
  }
  plan.begin_bit = desc.begin_bit;
  plan.end_bit = desc.end_bit ? desc.end_bit : 8 * plan.key_bytes;
  plan.passes = (plan.end_bit - desc.begin_bit + 7) / 8;
  plan.ranking = desc.ranking == SortRanking::automatic ? SortRanking::ballots : desc.ranking;
  plan.scatter = desc.scatter == SortScatter::automatic ? SortScatter::staged : desc.scatter;
  return {};
}

// The tile (workgroup x items, staging rounds) and the subgroup it ranks with.
Result<void> resolve_sort_tile(const ContextImpl& c, const SortDesc& desc, SortPlan& plan) {
  const Capabilities& caps = c.caps;
  const bool cpu = caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const bool onesweep = plan.algorithm == SortAlgorithm::onesweep;
  const bool tuned = desc.tuning.workgroup_size || desc.tuning.items_per_thread;
  const TileRow& row = tuned ? tile_row(cpu, SortAlgorithm::reduce_then_scan, Payload::any)
                             : tile_row(cpu, plan.algorithm, payload_of(plan));
  const uint32_t max_group = std::min(caps.max_workgroup_invocations, caps.max_workgroup_size[0]);
  uint32_t wg = desc.tuning.workgroup_size ? desc.tuning.workgroup_size : row.workgroup_size;
  uint32_t items = desc.tuning.items_per_thread ? desc.tuning.items_per_thread : tuned ? kDefaultItems : row.items;
  if (!desc.tuning.workgroup_size && wg > max_group) {
    wg = kFallbackWorkgroup;
    if (!desc.tuning.items_per_thread) items = kDefaultItems;
  }
  // A multiple of 128, so that every subgroup size up to 128 divides it (CUB's tuned onesweep uses 384).
  if (wg < 256 || wg > 1024 || wg % 128 != 0)
    return make_error(Status::invalid_argument, "RadixSort: tuning.workgroup_size ", wg,
                      " must be a multiple of 128 from 256 to 1024 (one invocation per digit, whole subgroups)");
  if (items < 1 || items > 32 || uint64_t(wg) * items > 32768)
    return make_error(Status::invalid_argument, "RadixSort: tuning.items_per_thread ", items, " must be 1..32 with at most ",
                      "32768 keys per tile (workgroup_size x items_per_thread; 16-bit in-tile counters)");
  const uint32_t min_sg = ranking_subgroup(c, wg);
  plan.min_sg = min_sg;
  if (plan.ranking == SortRanking::partitioned && !caps.has(feature_subgroup_partitioned))
    return make_error(Status::unsupported, "RadixSort: partitioned ranking needs VK_NV_shader_subgroup_partitioned ",
                      "(subgroupPartitionNV in compute), which the device lacks or the caller did not enable");
  if (plan.ranking == SortRanking::partitioned && !min_sg)
    return make_error(Status::unsupported, "RadixSort: partitioned ranking needs the subgroup path (ballot, shuffle ",
                      "and subgroups of 8..128 invocations, subgroups not disabled)");
  if (!VKPRIM_HAS_SORT_OPTION_KERNELS &&
      (plan.ranking == SortRanking::partitioned || plan.scatter == SortScatter::direct))
    return make_error(Status::unsupported, "RadixSort: ",
                      plan.scatter == SortScatter::direct ? "SortScatter::direct" : "SortRanking::partitioned",
                      " is built only with the CMake option VKPRIM_SORT_OPTION_KERNELS (automatic never picks it)");
  auto shared_bytes = [&](uint32_t it, uint32_t rounds) {
    return ranking_shared_bytes(plan, wg, it, rounds, min_sg, !onesweep);
  };
  // Onesweep stages a tile in two rounds where one would exceed kTwoPerSmShared and two bring it within;
  // a table tile shrinks until it fits one way or the other.
  auto rounds_for = [&](uint32_t it) -> uint32_t {
    return onesweep && it % 2 == 0 && shared_bytes(it, 1) > kTwoPerSmShared && shared_bytes(it, 2) <= kTwoPerSmShared
               ? 2u
               : 1u;
  };
  if (!cpu && onesweep && !tuned)
    while (items > kDefaultItems && shared_bytes(items, rounds_for(items)) > kTwoPerSmShared) --items;
  // Rounds follow the final item count (two need it even), also where the device's limit halves it.
  if (!desc.tuning.items_per_thread)
    while (items > 1 && shared_bytes(items, rounds_for(items)) > caps.max_shared_memory) items /= 2;
  const uint32_t rounds = rounds_for(items);
  if (shared_bytes(items, rounds) > caps.max_shared_memory)
    return make_error(Status::unsupported, "RadixSort: a ", wg, " x ", items, " tile needs ",
                      shared_bytes(items, rounds), " bytes of shared memory; the device allows ",
                      caps.max_shared_memory);
  plan.wg = wg;
  plan.items = items;
  plan.stage_rounds = rounds;
  plan.tile = uint64_t(wg) * items;
  return {};
}

// Workgroups of the grid-stride passes: the histogram is bound by memory latency, so enough to fill every
// multiprocessor several times over. llvmpipe stops every loop after 65535 iterations and falls through,
// so where max_count needs it more workgroups take smaller shares (kMaxLoopTrips).
void resolve_sort_grids(const ContextImpl& c, const SortDesc& desc, SortPlan& plan) {
  const bool cpu = c.caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  plan.histogram_groups_cap = cpu ? 8u : (c.caps.compute_units ? 8 * c.caps.compute_units : 1024u);
  plan.groups_cap = cpu ? 16u : 1024u;
  const uint64_t min_groups = ceil_div(plan.tiles_for(desc.max_count), kMaxLoopTrips);
  plan.histogram_groups_cap = uint32_t(std::max<uint64_t>(plan.histogram_groups_cap, min_groups));
  plan.groups_cap = uint32_t(std::max<uint64_t>(plan.groups_cap, min_groups));
}

// The shapes that follow the count, for automatic plans with no override and no wide payload: onesweep's
// smaller tiles (kSmallTiles) and the one-workgroup sort (kSingleLadder), each kept where the device allows
// its workgroup, its tile fits shared memory and is smaller than the plan's (onesweep) or larger than the
// rung before (one workgroup). Kernels are built later, only up to the shape that holds max_count.
void resolve_sort_ladders(const ContextImpl& c, const SortDesc& desc, SortPlan& plan) {
  const bool by_count = desc.algorithm == SortAlgorithm::automatic && !desc.tuning.workgroup_size &&
                        !desc.tuning.items_per_thread && desc.ranking == SortRanking::automatic &&
                        desc.scatter == SortScatter::automatic && !plan.value_units;
  if (!by_count) return;
  const uint32_t max_group = std::min(c.caps.max_workgroup_invocations, c.caps.max_workgroup_size[0]);
  auto fits = [&](uint32_t group, uint32_t items, uint32_t min_sg) {
    return ranking_shared_bytes(plan, group, items, 1, min_sg, false) <= c.caps.max_shared_memory;
  };
  if (plan.algorithm == SortAlgorithm::onesweep) {
    const uint32_t group = c.caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 256u : 512u;
    const uint32_t min_sg = ranking_subgroup(c, group);
    for (const SmallTileRow& r : kSmallTiles) {
      const uint64_t tile = uint64_t(group) * r.items;
      if (group <= max_group && tile < plan.tile && fits(group, r.items, min_sg))
        plan.small_tiles.push_back({tile * r.max_tiles, tile, nullptr, nullptr, group, r.items, min_sg});
    }
  }
  for (const SingleRow& r : kSingleLadder) {
    const uint64_t keys = uint64_t(r.workgroup_size) * r.items;
    if (r.workgroup_size > max_group || (r.items == 16 && !plan.small_tiles.empty())) continue;
    if (!plan.singles.empty() && keys <= plan.singles.back().keys) continue;
    const uint32_t min_sg = ranking_subgroup(c, r.workgroup_size);
    if (fits(r.workgroup_size, r.items, min_sg)) plan.singles.push_back({keys, nullptr, r.workgroup_size, r.items, min_sg});
  }
  plan.single_keys = plan.singles.empty() ? 0 : plan.singles.back().keys;
}

// One binding covers all keys (and all values): the plan refuses what would need storage-range windows.
Result<void> check_sort_bindings(ContextImpl& c, const SortDesc& desc, const SortPlan& plan) {
  const uint64_t key_window = window_elements(c, plan.key_bytes, 1);
  if (desc.max_count > key_window)
    return make_error(Status::unsupported, "RadixSort: max_count ", desc.max_count, " ", to_string(desc.key_type),
                      " keys exceed one storage-buffer binding (maxStorageBufferRange ",
                      c.caps.max_storage_buffer_range, " bytes: ", key_window,
                      " keys); sorting in windows is not implemented");
  if (plan.value_bytes && desc.max_count > window_elements(c, plan.value_bytes, 1))
    return make_error(Status::unsupported, "RadixSort: max_count ", desc.max_count, " values of ", plan.value_bytes,
                      " bytes exceed one storage-buffer binding (maxStorageBufferRange ",
                      c.caps.max_storage_buffer_range, " bytes)");
  return {};
}

// The sort kernels are named <family>_k<key bits>[<payload>][<options>] (shaders/kernels.cmake): a family takes
// the key width only, the key width and payload, or those and the ranking / scatter options.
enum class Suffix { none, keys, values, options };
enum class SortFamily { single, histogram, upsweep, scan, downsweep, onesweep, copy };
struct SortFamilyName {
  const char* base;
  Suffix suffix;
};
constexpr SortFamilyName kSortFamilies[] = {
    {"sort/single", Suffix::values},      {"sort/histogram", Suffix::keys},    {"sort/upsweep", Suffix::keys},
    {"sort/scan", Suffix::none},          {"sort/downsweep", Suffix::options}, {"sort/onesweep", Suffix::options},
    {"sort/copy", Suffix::values}};
constexpr const char* kKeyParts[] = {"_k8", "_k16", "_k32", "_k64"};
constexpr const char* kPayloadParts[] = {"", "_v32", "_v64", "_vw1", "_vw4"};
constexpr const char* kOptionParts[] = {"", "_p", "_d", "_p_d"};
constexpr size_t kKeys = std::size(kKeyParts), kPayloads = std::size(kPayloadParts), kOptions = std::size(kOptionParts);

// A name's parts, as indices into the tables above; those its family's name lacks are 0.
struct SortNameParts {
  size_t key = 0, payload = 0, option = 0;
  constexpr SortNameParts of(SortFamily f) const {
    const Suffix s = kSortFamilies[size_t(f)].suffix;
    return {s == Suffix::none ? 0 : key, s >= Suffix::values ? payload : 0, s == Suffix::options ? option : 0};
  }
  constexpr size_t slot(SortFamily f) const {
    return ((size_t(f) * kKeys + key) * kPayloads + payload) * kOptions + option;
  }
};
constexpr size_t kSortNameSlots = std::size(kSortFamilies) * kKeys * kPayloads * kOptions;

// Every name the families' parts compose, looked up in the kernel list at compile time (none where unlisted).
consteval std::array<std::optional<KernelName>, kSortNameSlots> compose_sort_names() {
  std::array<std::optional<KernelName>, kSortNameSlots> names{};
  for (size_t f = 0; f < std::size(kSortFamilies); ++f) {
    const auto [base, suffix] = kSortFamilies[f];
    for (size_t k = 0; k < (suffix == Suffix::none ? 1 : kKeys); ++k)
      for (size_t p = 0; p < (suffix >= Suffix::values ? kPayloads : 1); ++p)
        for (size_t o = 0; o < (suffix == Suffix::options ? kOptions : 1); ++o) {
          std::string name = base;
          if (suffix != Suffix::none) name += kKeyParts[k];
          if (suffix >= Suffix::values) name += kPayloadParts[p];
          if (suffix == Suffix::options) name += kOptionParts[o];
          names[SortNameParts{k, p, o}.slot(SortFamily(f))] = KernelName::find(name);
        }
  }
  return names;
}
constexpr auto kSortNames = compose_sort_names();

// The names every build lists (options for 32- and 64-bit keys only, the one-workgroup sort for payloads of
// up to 8 bytes), so a misspelt part fails to compile.
consteval bool sort_names_listed() {
  for (size_t f = 0; f < std::size(kSortFamilies); ++f)
    for (size_t k = 0; k < kKeys; ++k)
      for (size_t p = 0; p < kPayloads; ++p)
        for (size_t o = 0; o < kOptions; ++o) {
          const bool listed = !(o && k < 2) && !(SortFamily(f) == SortFamily::single && p > 2);
          const size_t slot = SortNameParts{k, p, o}.of(SortFamily(f)).slot(SortFamily(f));
          if (listed && !kSortNames[slot]) return false;
        }
  return true;
}
static_assert(sort_names_listed(), "a sort kernel name composed here is not in shaders/kernels.cmake");

// Builds the kernels of one plan.
class SortKernels {
 public:
  SortKernels(ContextImpl& c, const SortPlan& plan) : c_(c), p_(plan) {
    parts_.key = p_.key_bytes == 1 ? 0 : p_.key_bytes == 2 ? 1 : p_.key_bytes == 4 ? 2 : 3;
    parts_.payload = p_.value_units   ? (p_.value_unit == 1 ? 3 : 4)
                     : p_.value_bytes ? (p_.value_bytes == 4 ? 1 : 2)
                                      : 0;
    parts_.option = (p_.ranking == SortRanking::partitioned ? 1 : 0) | (p_.scatter == SortScatter::direct ? 2 : 0);
  }

  // ranking: a kernel that ranks digits (subgroups of min_sg, 0 for the emulation); onesweep_ranking: the
  // onesweep digit pass. extra_mode: KEY_FLAGS bits beside the key transform.
  Result<const Kernel*> get(SortFamily family, bool ranking, bool onesweep_ranking, uint32_t wg, uint32_t items,
                            uint32_t min_sg, uint32_t rounds, uint32_t extra_mode = 0) const {
    const std::optional<KernelName> name = kSortNames[parts_.of(family).slot(family)];
    if (!name)
      return make_error(Status::unsupported, "RadixSort: shaders/kernels.cmake lists no ",
                        kSortFamilies[size_t(family)].base, " kernel for these keys and values");
    KernelDesc kd{*name};
    kd.plan = "RadixSort";
    kd.group = &kShaderGroup_sort;
    kd.variant = ranking && !min_sg ? "nosg" : "default";
    kd.workgroup_size = wg;
    kd.items = items;
    kd.uses_subgroups = ranking && min_sg;
    if (ranking && min_sg) kd.spec.subgroup_min = min_sg;
    // The key transform is a specialization constant, which the driver folds (u32 ascending: none).
    kd.spec.key_flags = p_.key_flags() | extra_mode;
    // Onesweep indexes only below the count and the plan's tile state, so its ranking kernel runs without
    // the driver's bounds checks where allowed (docs/PERFORMANCE.md, Radix sort).
    kd.unchecked_storage = onesweep_ranking;
    // In the kernels that move wide values (_vw).
    if (p_.value_units && kSortFamilies[size_t(family)].suffix >= Suffix::values) kd.spec.value_units = p_.value_units;
    if (onesweep_ranking && rounds > 1) kd.spec.stage_rounds = rounds;
    return get_kernel(c_, kd);
  }

 private:
  ContextImpl& c_;
  const SortPlan& p_;
  SortNameParts parts_;
};

// Every kernel the plan records: the one-workgroup rungs up to the first that holds max_count, and where
// max_count exceeds them the digit passes of the algorithm (onesweep's smaller tiles likewise trimmed).
Result<void> build_sort_kernels(ContextImpl& c, const SortDesc& desc, SortPlan& plan) {
  const SortKernels k(c, plan);
  const uint32_t sg = plan.min_sg;
  auto take = [](const Kernel*& slot, Result<const Kernel*> r) -> Result<void> {
    if (!r) return std::move(r).error();
    slot = r.value();
    return {};
  };
  size_t rungs = 0;
  while (rungs < plan.singles.size() && (rungs == 0 || plan.singles[rungs - 1].keys < desc.max_count)) {
    SortPlan::Single& s = plan.singles[rungs++];
    if (auto ok = take(s.kernel, k.get(SortFamily::single, true, false, s.wg, s.items, s.min_sg, 1)); !ok)
      return ok;
  }
  plan.singles.resize(rungs);
  const bool multi_pass = desc.max_count > plan.single_keys;
  std::vector<SortPlan::SmallTile> small;
  if (multi_pass && plan.algorithm == SortAlgorithm::onesweep) {
    const uint32_t mode = partials_mode(plan.tile);
    if (auto ok = take(plan.histogram, k.get(SortFamily::histogram, false, false, plan.wg, plan.items, sg,
                                             plan.stage_rounds, mode));
        !ok)
      return ok;
    if (auto ok = take(plan.onesweep, k.get(SortFamily::onesweep, true, true, plan.wg, plan.items, sg,
                                            plan.stage_rounds, mode));
        !ok)
      return ok;
    for (SortPlan::SmallTile t : plan.small_tiles) {
      if (t.up_to <= plan.single_keys) continue;
      if (!small.empty() && small.back().up_to >= desc.max_count) break;
      const uint32_t small_mode = partials_mode(t.tile);
      if (auto ok = take(t.kernel, k.get(SortFamily::onesweep, true, true, t.wg, t.items, t.min_sg, 1, small_mode));
          !ok)
        return ok;
      if (auto ok = take(t.histogram, k.get(SortFamily::histogram, false, false, t.wg, t.items, t.min_sg, 1,
                                            small_mode));
          !ok)
        return ok;
      small.push_back(t);
    }
  } else if (multi_pass) {
    if (auto ok = take(plan.upsweep, k.get(SortFamily::upsweep, false, false, plan.wg, plan.items, sg, 1)); !ok)
      return ok;
    if (auto ok = take(plan.scan, k.get(SortFamily::scan, true, false, plan.wg, plan.items, sg, 1)); !ok) return ok;
    if (auto ok = take(plan.downsweep, k.get(SortFamily::downsweep, true, false, plan.wg, plan.items, sg, 1));
        !ok)
      return ok;
  }
  plan.small_tiles = std::move(small);
  if (multi_pass && plan.passes % 2 == 1)
    if (auto ok = take(plan.copy, k.get(SortFamily::copy, false, false, plan.wg, plan.items, sg, 1)); !ok)
      return ok;
  auto args = indirect_args_kernel(c, "RadixSort");
  if (!args) return std::move(args).error();
  plan.args = args.value();
  return {};
}

// Scratch: meta (header, histograms, tile state or digit table, per-workgroup histogram slots), the
// ping-pong keys and values of multi-pass sorts, the record_indirect region.
Result<void> lay_out_sort_scratch(ContextImpl& c, const SortDesc& desc, SortPlan& plan) {
  plan.align = binding_alignment(c);
  const bool multi_pass = desc.max_count > plan.single_keys;
  uint64_t max_tiles = plan.tiles_for(desc.max_count);
  for (const SortPlan::SmallTile& t : plan.small_tiles)
    max_tiles = std::max(max_tiles, ceil_div(std::min(desc.max_count, t.up_to), t.tile));
  // A plan whose every count the one-workgroup sort takes keeps only the header (statistics_offset() stays
  // inside scratch) and the record_indirect region.
  uint64_t meta_words = multi_pass ? kRegionWord : kHeaderWords;
  if (multi_pass && plan.algorithm == SortAlgorithm::onesweep) {
    meta_words += max_tiles * kDigits;
    // Per-workgroup histogram slots, for tiles of at most kPartialTileKeys: as many as the smallest tile's
    // count of max_count needs, at most 32 (u32 keys: 128 KiB).
    const uint64_t smallest = plan.small_tiles.empty() ? plan.tile : plan.small_tiles[0].tile;
    if (takes_partials(smallest))
      plan.partial_slots =
          uint32_t(std::min<uint64_t>({32, plan.histogram_groups_cap, ceil_div(desc.max_count, smallest)}));
    plan.partials_word = uint32_t(meta_words);
    meta_words += uint64_t(plan.partial_slots) * plan.passes * kDigits;
  } else if (multi_pass) {
    meta_words += kDigits + kDigits * plan.groups_for(desc.max_count);
  }
  plan.meta_bytes = align_up(meta_words * 4, plan.align);
  if (plan.meta_bytes > c.caps.max_storage_buffer_range)
    return make_error(Status::unsupported, "RadixSort: the tile state of ", max_tiles, " tiles (", plan.meta_bytes,
                      " bytes) exceeds one storage-buffer binding; use larger tiles or a smaller max_count");
  VkDeviceSize offset = plan.meta_bytes;
  plan.keys_offset = offset;
  plan.keys_bytes = multi_pass ? align_up(desc.max_count * plan.key_bytes, plan.align) : 0;
  offset += plan.keys_bytes;
  plan.values_offset = offset;
  plan.values_bytes = multi_pass ? align_up(desc.max_count * plan.value_bytes, plan.align) : 0;
  offset += plan.values_bytes;
  plan.indirect_offset = offset;
  offset += align_up(kIndirectRegionBytes, plan.align);
  plan.scratch_bytes = offset;
  return {};
}

}  // namespace
}  // namespace detail

// validate → resolve the algorithm and policy (kTileShapes, kSmallTiles, kSingleLadder) → build the kernels
// → lay out scratch.
Result<RadixSort> RadixSort::create(Context& context, const SortDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_sort_desc(desc, c.caps); !ok) return ok.error();
  auto plan = std::make_unique<detail::SortPlan>();
  plan->context = &c;
  plan->desc = desc;
  if (auto ok = detail::resolve_sort_algorithm(c, desc, *plan); !ok) return ok.error();
  if (auto ok = detail::resolve_sort_tile(c, desc, *plan); !ok) return ok.error();
  detail::resolve_sort_grids(c, desc, *plan);
  detail::resolve_sort_ladders(c, desc, *plan);
  if (auto ok = detail::check_sort_bindings(c, desc, *plan); !ok) return ok.error();
  if (auto ok = detail::build_sort_kernels(c, desc, *plan); !ok) return ok.error();
  if (auto ok = detail::lay_out_sort_scratch(c, desc, *plan); !ok) return ok.error();
  plan->descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return RadixSort(std::move(plan));
}

namespace {

Result<void> check_buffers(const detail::SortPlan& p, const BufferRange& keys, const BufferRange& values,
                           uint64_t count, const BufferRange& scratch, const ScratchRequirements& need,
                           const char* what) {
  const VkDeviceSize key_bytes = count * p.key_bytes, value_bytes = count * p.value_bytes;
  const bool pairs = p.value_bytes != 0;
  if (auto ok = detail::check_range(keys, key_bytes, p.key_bytes, "keys", count > 0); !ok)
    return detail::with_call(ok, what);
  if (auto ok = detail::check_range(values, value_bytes, p.value_bytes ? p.value_bytes : 1, "values", pairs && count > 0);
      !ok)
    return detail::with_call(ok, what);
  if (auto ok = detail::check_scratch(scratch, need, what); !ok) return ok;
  if (count == 0) return {};
  if (pairs && detail::overlaps(keys, key_bytes, values, value_bytes))
    return make_error(Status::invalid_argument, what, ": keys and values ranges overlap");
  if (detail::overlaps(scratch, need.size, keys, key_bytes))
    return make_error(Status::invalid_argument, what, ": scratch and keys ranges overlap");
  if (pairs && detail::overlaps(scratch, need.size, values, value_bytes))
    return make_error(Status::invalid_argument, what, ": scratch and values ranges overlap");
  return {};
}

}  // namespace

Result<void> RadixSort::record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values, uint64_t count,
                               const BufferRange& scratch) const {
  const detail::SortPlan& p = *plan_;
  if (count > p.desc.max_count)
    return make_error(Status::invalid_argument, "RadixSort::record: count ", count, " exceeds max_count ",
                      p.desc.max_count);
  if (auto ok = check_buffers(p, keys, values, count, scratch, scratch_requirements(), "RadixSort::record"); !ok)
    return ok;
  std::vector<detail::Pass> passes;
  if (count > 1) detail::SortPassBuilder(p, keys, values, scratch, passes, false).build(count);
  return detail::record_passes(*p.context, *p.descriptors, cmd, passes, "RadixSort", "record");
}

Result<void> RadixSort::record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                        const BufferRange& count_buffer, const BufferRange& scratch) const {
  const detail::SortPlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  const uint64_t max_count = p.desc.max_count;
  // The onesweep tile is chosen by max_count (SortPlan::small_tiles).
  const detail::SortPlan::SmallTile onesweep_tile = p.onesweep_for(max_count);
  const uint64_t max_groups = std::max(
      {p.tiles_for(max_count), detail::ceil_div(max_count, onesweep_tile.tile), p.copy_groups(max_count)});
  if (auto ok = detail::check_indirect_limits(c, max_count, detail::window_elements(c, p.key_bytes, 1), max_groups,
                                              "RadixSort");
      !ok)
    return ok;
  if (auto ok = detail::check_count_buffer(count_buffer, "RadixSort::record_indirect"); !ok) return ok;
  const ScratchRequirements need = scratch_requirements();
  if (auto ok = check_buffers(p, keys, values, max_count, scratch, need, "RadixSort::record_indirect"); !ok) return ok;
  if (detail::overlaps(scratch, need.size, count_buffer, 4) || detail::overlaps(keys, max_count * p.key_bytes, count_buffer, 4) ||
      (p.value_bytes && detail::overlaps(values, max_count * p.value_bytes, count_buffer, 4)))
    return make_error(Status::invalid_argument, "RadixSort::record_indirect: the count buffer overlaps keys, values or ",
                      "scratch");
  const uint32_t tile = uint32_t(p.tile);
  std::vector<detail::IndirectEntry> entries(4);
  entries[detail::kEntryTiles] = {uint32_t(onesweep_tile.tile), 0, 0, 0};
  entries[detail::kEntryHistogram] = {uint32_t(onesweep_tile.tile), 0, p.histogram_groups_cap, 0};
  entries[detail::kEntryGroups] = {tile, 0, p.groups_cap, 0};
  entries[detail::kEntryCopy] = {p.wg, 0, detail::kCopyGroupsCap, 0};
  const detail::BoundBuffer region{scratch.buffer, scratch.offset + p.indirect_offset, detail::kIndirectRegionBytes};
  std::vector<detail::Pass> passes;
  passes.push_back(detail::make_indirect_args_pass(c, p.args, count_buffer, region, max_count, entries));
  detail::SortPassBuilder(p, keys, values, scratch, passes, true).build(max_count);
  return detail::record_passes(c, *p.descriptors, cmd, passes, "RadixSort", "record_indirect");
}

}  // namespace vkprim
