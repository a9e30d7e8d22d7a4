// Argument checks and variant naming shared by every plan.
#pragma once

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>

#include "context_impl.hpp"
#include "errors.hpp"
#include "vkprim/operator.hpp"
#include "vkprim/types.hpp"

namespace vkprim::detail {

constexpr uint64_t kMaxCount = uint64_t(1) << 40;

// The Tuning fields a plan reads (check_tuning's `reads`).
enum TuningField : uint32_t {
  tune_workgroup_size = 1u << 0,
  tune_items_per_thread = 1u << 1,
  tune_vectors_per_thread = 1u << 2,
  tune_max_workgroups = 1u << 3,
  tune_lookback_windows = 1u << 4,
};
// invalid_argument where a field the plan does not read is set, so that an override is never ignored.
inline Result<void> check_tuning(const char* plan, const Tuning& t, uint32_t reads) {
  const struct { uint32_t bit, value; const char* name; } fields[] = {
      {tune_workgroup_size, t.workgroup_size, "workgroup_size"},
      {tune_items_per_thread, t.items_per_thread, "items_per_thread"},
      {tune_vectors_per_thread, t.vectors_per_thread, "vectors_per_thread"},
      {tune_max_workgroups, t.max_workgroups, "max_workgroups"},
      {tune_lookback_windows, t.lookback_windows, "lookback_windows"}};
  std::string read;
  for (const auto& f : fields)
    if (reads & f.bit) read += std::string(read.empty() ? "" : ", ") + f.name;
  for (const auto& f : fields)
    if (f.value && !(reads & f.bit))
      return make_error(Status::invalid_argument, plan, ": tuning.", f.name, " = ", f.value,
                        " is not an override this plan reads (",
                        read.empty() ? std::string("it reads none") : "it reads " + read, "); leave it 0");
  return {};
}
// Header of the chained kernels' tile state (common/tile_state.glsl: 16 u32 words: ticket and counters).
constexpr VkDeviceSize kStateHeaderBytes = 64;
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
// The first row of a policy table (rows with a `driver` member) whose driver is the device's, or
// VkDriverId(0), which matches any; the last row where none does. Tuning as data: one lookup for every table.
template <class Row, size_t N>
const Row& policy_row(const Row (&rows)[N], VkDriverId driver) {
  for (const Row& r : rows)
    if (r.driver == driver || r.driver == VkDriverId(0)) return r;
  return rows[N - 1];
}

// v rounded up to a multiple of a (a > 0): scratch regions' offsets and sizes.
inline uint64_t align_up(uint64_t v, uint64_t a) { return ceil_div(v, a) * a; }

// Bytes the clear before a chained pass fills: the header and the `tiles` states the pass uses, but at
// least 16 KiB (within the region): on NVIDIA's driver small vkCmdFillBuffer clears cost more than 16 KiB
// ones (docs/PERFORMANCE.md, Scan), while clearing only the states in use spares a plan sized for 2^28 a
// 256 KiB clear at small counts.
inline VkDeviceSize state_clear_bytes(uint64_t tiles, VkDeviceSize per_tile, VkDeviceSize region) {
  constexpr VkDeviceSize kMinClearBytes = 16384;
  return std::min(region, std::max(kStateHeaderBytes + tiles * per_tile, kMinClearBytes));
}

// Whether the chained kernels may keep their tile state in 64-bit atomic words (the "64" kernels,
// common/tile_state.glsl VKPRIM_STATE64): shaderBufferInt64Atomics and shaderInt64 enabled.
inline bool state64_enabled(const ContextImpl& c) {
  return c.caps.has(feature_int64_atomics) && c.caps.has(feature_int64);
}

// Bit 31 of the chained kernels' knob word (chained scan, chained select, onesweep): look-back steps and
// depth are not counted (ContextOptions::collect_statistics off).
constexpr uint32_t kNoStatisticsBit = 1u << 31;
inline uint32_t statistics_bit(const ContextOptions& o) { return o.collect_statistics ? 0u : kNoStatisticsBit; }
// Bit 30 of the same knob words: the tile index is the workgroup index (ContextOptions::tile_order), for a
// dispatch of `tiles` tiles (ContextImpl::launch_order).
constexpr uint32_t kLaunchOrderBit = 1u << 30;
inline uint32_t launch_order_bit(const ContextImpl& c, uint64_t tiles) {
  return c.launch_order(tiles) ? kLaunchOrderBit : 0u;
}
// The chained scan's and onesweep's knob word for a dispatch of `tiles` tiles: the forced-skip period below
// bit 30, the launch-order bit where `fallback` (the kernel can reduce a stuck predecessor itself), then the
// statistics bit.
inline uint32_t chained_knobs(const ContextImpl& c, bool fallback, uint64_t tiles) {
  return std::min<uint32_t>(c.testing.skip_publication_period, kLaunchOrderBit - 1) |
         (fallback ? launch_order_bit(c, tiles) : 0u) | statistics_bit(c.options);
}

// The chained Select's and keyed kernels' knob word for a dispatch of `tiles` tiles: the spin limit in bits
// 0-15, the forced-skip period in bits 16-29, then the launch-order and statistics bits.
inline uint32_t packed_knobs(const ContextImpl& c, uint64_t tiles) {
  return std::min<uint32_t>(c.spin_limit(), 0xFFFF) |
         std::min<uint32_t>(c.testing.skip_publication_period, 0x3FFF) << 16 | launch_order_bit(c, tiles) |
         statistics_bit(c.options);
}

// `r`, or its error with "<call>: " in front of the message (call: "Reduce::record").
inline Result<void> with_call(Result<void> r, const char* call) {
  if (r) return r;
  return make_error(r.status(), call, ": ", r.message());
}

// `r`, or its error with "<plan>::<call>: " in front of the message.
inline Result<void> with_context(Result<void> r, const char* plan, const char* call) {
  if (r) return r;
  return make_error(r.status(), plan, "::", call, ": ", r.message());
}

// parse() of the public enums: the value 0..last whose to_string() is `name`.
template <class Enum>
bool parse_enum(const char* name, Enum last, Enum& out) {
  for (int i = 0; i <= int(last); ++i)
    if (std::strcmp(name, to_string(Enum(i))) == 0) {
      out = Enum(i);
      return true;
    }
  return false;
}

// A DataType value the enum names (a cast integer may not).
inline bool known_type(DataType type) { return int(type) >= 0 && int(type) <= int(DataType::u16); }

// `type` and `op` for a plan over values (every plan but RadixSort, whose key checks are its own).
inline Result<void> check_type_op(const ContextImpl& c, DataType type, Op op, const char* plan) {
  if (!known_type(type)) return make_error(Status::invalid_argument, plan, ": unknown DataType ", int(type));
  if (int(op) < 0 || int(op) > int(Op::bit_xor))
    return make_error(Status::invalid_argument, plan, ": unknown operator ", int(op));
  if (type == DataType::u8 || type == DataType::u16)
    return make_error(Status::invalid_argument, plan, ": ", to_string(type), " is a sort-key type only (RadixSort); ",
                      plan, " takes u32, i32, f32, u64, i64 or f64");
  if (!is_integer(type) && (op == Op::bit_and || op == Op::bit_or || op == Op::bit_xor))
    return make_error(Status::invalid_argument, plan, ": bitwise operator ", to_string(op),
                      " is defined for integer types only, not ", to_string(type));
  if ((type == DataType::u64 || type == DataType::i64) && !c.caps.has(feature_int64))
    return make_error(Status::unsupported, plan, ": ", to_string(type), " needs shaderInt64, which the device ",
                      "lacks or the caller did not enable");
  if (type == DataType::f64 && !c.caps.has(feature_float64))
    return make_error(Status::unsupported, plan, ": f64 needs shaderFloat64, which the device lacks or the caller ",
                      "did not enable");
  return {};
}

// A user operator as generated by vkprim_add_operator (include/vkprim/operator.hpp).
inline Result<void> check_user_operator(const UserOperator& op, const char* plan) {
  if (!op.name || !op.kernels)
    return make_error(Status::invalid_argument, plan, ": user_operator has no name or no kernels; pass the operator "
                      "vkprim_add_operator generated (vkprim_ops::<name>())");
  if (op.size < 4 || op.size > 64 || op.size % 4 != 0 || op.words == 0 || op.words * 4 > op.size)
    return make_error(Status::invalid_argument, plan, ": user operator ", op.name, " has size ", op.size, " and ",
                      op.words, " words; the size must be a multiple of 4 from 4 to 64 holding the words");
  return {};
}

// A user operator's kernel variant: its name, or "<name>.nosg" where subgroups are not used at `wg`
// invocations or the device lacks the shuffles and ballots its subgroup code takes.
inline std::string user_variant(const ContextImpl& c, const UserOperator& op, bool kernel_uses_subgroups, uint32_t wg) {
  constexpr VkSubgroupFeatureFlags needed =
      VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
  const bool subgroups = kernel_uses_subgroups && c.use_subgroups(wg) && (c.caps.subgroup_operations & needed) == needed;
  return subgroups ? std::string(op.name) : std::string(op.name) + ".nosg";
}

// The workgroup size for a user operator's kernels: `wg`, halved (down to 64) until their shared memory
// fits: a value of `elem` bytes per invocation for the workgroup scan (common/workgroup_scan.glsl, ROW_N 1
// for user types), one for the ordered reduction (common/workgroup.glsl), and reduce_then_scan's store
// staging of a tile (common/blocked_tile.glsl: user_items values, at most 64 bytes per invocation, one pad
// word per 32).
inline uint32_t user_workgroup(const ContextImpl& c, uint32_t wg, uint32_t elem) {
  while (wg > 64 && (2 * uint64_t(wg) + 1) * elem + uint64_t(wg) * 66 + 64 > c.caps.max_shared_memory) wg /= 2;
  return wg;
}

// Values per invocation of a user operator's tiles (reduce, reduce_then_scan, chained): about 64 bytes, as
// measured best on an H100 for 16- and 32-byte types (docs/PERFORMANCE.md); 64-byte values one each.
inline uint32_t user_items(uint32_t elem) { return std::max(1u, 64u / elem); }

// The chained scan's: about 128 bytes per invocation for values up to 32 bytes, twice user_items (fewer,
// larger tiles waiting on the look-back), else user_items (docs/PERFORMANCE.md, User operators); rounded
// down to a power of two, so that it divides the subgroup size and the stores go through the shuffle
// transposition (common/blocked_tile.glsl).
// At most kMaxUserChainedItems (4-byte values: 16, 64 bytes).
constexpr uint32_t kMaxUserChainedItems = 16;
inline uint32_t user_chained_items(uint32_t elem) {
  const uint32_t bytes = elem <= 32 ? 128 : 64;
  uint32_t items = 1;
  while (uint64_t(items) * 2 * elem <= bytes && items < kMaxUserChainedItems) items *= 2;
  return items;
}

// The subgroup size common/radix.glsl's multisplit (RadixSort, SegmentedSort) ranks with in a workgroup of
// `group` invocations, or 0 for the emulation. The multisplit needs ballot and shuffle and full subgroups of 8..128 invocations (its shared arrays are
// sized for that), of the size kernel.cpp pins (ContextImpl::full_subgroup_size).
inline uint32_t ranking_subgroup(const ContextImpl& c, uint32_t group) {
  const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
                                        VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  const uint32_t smallest = c.full_subgroup_size(group);
  const bool usable = c.use_subgroups(group) && (c.caps.subgroup_operations & needed) == needed && smallest >= 8 &&
                      smallest <= 128;
  return usable ? smallest : 0u;
}

// Shared memory of a kernel that ranks a tile of group x items keys with common/radix.glsl (SORT_RANKING),
// staged in `rounds` rounds (STAGE_ROUNDS) with `stage_width` words per key (the key's, or a 4- or 8-byte
// value's). min_sg: the smallest subgroup, 0 for the emulation; extra_words: the kernel's own shared words.
inline uint64_t radix_ranking_shared_bytes(uint64_t stage_width, uint64_t group, uint32_t items, uint32_t rounds,
                                           uint64_t min_sg, uint64_t extra_words) {
  constexpr uint64_t digits = 256;
  const uint64_t sg = min_sg ? min_sg : 16;
  const uint64_t counters = group / sg * (digits / 2);
  const uint64_t stage = group * (items / rounds) * stage_width;
  const uint64_t scan = min_sg ? group / sg : 3 * group;
  return 4 * (std::max(counters, stage) + 2 * digits + scan + extra_words + 3);
}

// Scratch regions of elements of `elem` bytes: multiples of the binding alignment and of the element, so
// that a region after others starts a whole number of elements after the first.
inline VkDeviceSize region_granule(VkDeviceSize align, uint32_t elem) { return std::lcm<VkDeviceSize>(align, elem); }

// "u32" or "u32.nosg": the subgroup variant when the kernel uses subgroups, the device offers them for
// this type with full subgroups at workgroup size `wg`, and the caller did not force the emulation. Float
// subgroup variants of kernels with an operator carry it ("f32.min": common/types.glsl, VKPRIM_OP).
inline Result<std::string> variant_name(const ContextImpl& c, DataType type, std::optional<Op> op,
                                        bool kernel_uses_subgroups, uint32_t wg) {
  std::string name = to_string(type);
  if (!kernel_uses_subgroups) return name;
  bool subgroups = c.use_subgroups(wg);
  // 64-bit integers in subgroup operations need shaderSubgroupExtendedTypes.
  if ((type == DataType::u64 || type == DataType::i64) && !c.caps.has(feature_subgroup_extended_types))
    subgroups = false;
  if (!subgroups) return name + ".nosg";
  return op && !is_integer(type) ? name + "." + to_string(*op) : name;
}

// The variant of a kernel over the plan's values: a user operator's (user_variant) where the plan has one,
// else the built-in type's (variant_name).
inline Result<std::string> value_variant(const ContextImpl& c, DataType type, std::optional<Op> op,
                                         const UserOperator* user, bool kernel_uses_subgroups, uint32_t wg) {
  if (user) return user_variant(c, *user, kernel_uses_subgroups, wg);
  return variant_name(c, type, op, kernel_uses_subgroups, wg);
}

// A range the plan reads or writes `bytes` of. required: a null buffer is an error.
inline Result<void> check_range(const BufferRange& r, VkDeviceSize bytes, uint32_t elem, const char* what,
                                bool required) {
  if (!required) return {};
  if (!r.buffer) return make_error(Status::invalid_argument, what, " buffer is VK_NULL_HANDLE");
  if (r.offset % elem)
    return make_error(Status::invalid_argument, what, " offset ", r.offset, " is not a multiple of the element size ",
                      elem);
  if (const std::string why = range_size_problem(r.size, bytes); !why.empty())
    return make_error(Status::invalid_argument, what, " ", why);
  return {};
}

// Errors start with "plan: ", or "plan::call: " where `call` is given (joined only on an error: a record checks
// its scratch every time).
inline Result<void> check_scratch(const BufferRange& r, const ScratchRequirements& need, const char* plan,
                                  const char* call = nullptr) {
  if (need.size == 0) return {};
  const char* sep = call ? "::" : "";
  if (!call) call = "";
  if (!r.buffer)
    return make_error(Status::invalid_argument, plan, sep, call, ": scratch buffer is VK_NULL_HANDLE but ", need.size,
                      " bytes are needed");
  if (r.offset % need.alignment)
    return make_error(Status::invalid_argument, plan, sep, call, ": scratch offset ", r.offset, " is not a multiple of ",
                      need.alignment);
  if (const std::string why = range_size_problem(r.size, need.size); !why.empty())
    return make_error(Status::invalid_argument, plan, sep, call, ": scratch ", why, " (scratch_requirements())");
  return {};
}

inline bool overlaps(const BufferRange& a, VkDeviceSize a_bytes, const BufferRange& b, VkDeviceSize b_bytes) {
  if (a.buffer != b.buffer) return false;
  return a.offset < b.offset + b_bytes && b.offset < a.offset + a_bytes;
}

}  // namespace vkprim::detail
