// Argument checks and variant naming shared by every plan.
#pragma once

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "context_impl.hpp"
#include "errors.hpp"
#include "vkprim/types.hpp"

namespace vkprim::detail {

constexpr uint64_t kMaxCount = uint64_t(1) << 40;
// Header of the chained kernels' tile state (common/tile_state.glsl: 16 u32 words: ticket and counters).
constexpr VkDeviceSize kStateHeaderBytes = 64;
// Bytes the clear before a chained pass fills: the header and the `tiles` states the pass uses, but at
// least 16 KiB (within the region): on NVIDIA's driver (580, H100) vkCmdFillBuffer of 4 KiB or less cost
// ~3 us more than 16 KiB or 256 KiB (chained scan of 2^20 u32: 13.5-14.3 us against 10.6-11.1 us), while
// clearing only the states in use spares a plan sized for 2^28 a 256 KiB clear at small counts.
inline VkDeviceSize state_clear_bytes(uint64_t tiles, VkDeviceSize per_tile, VkDeviceSize region) {
  constexpr VkDeviceSize kMinClearBytes = 16384;
  return std::min(region, std::max(kStateHeaderBytes + tiles * per_tile, kMinClearBytes));
}

// Bit 31 of the chained kernels' knob word (chained scan, chained select, onesweep): look-back steps and
// depth are not counted (ContextOptions::collect_statistics off).
constexpr uint32_t kNoStatisticsBit = 1u << 31;
inline uint32_t statistics_bit(const ContextOptions& o) { return o.collect_statistics ? 0u : kNoStatisticsBit; }
// Bit 30 of the same knob words: the tile index is the workgroup index (ContextOptions::tile_order).
constexpr uint32_t kLaunchOrderBit = 1u << 30;
inline bool launch_order(const ContextImpl& c) {
  if (c.options.tile_order != TileOrder::automatic) return c.options.tile_order == TileOrder::launch;
  return c.caps.driver_id == VK_DRIVER_ID_NVIDIA_PROPRIETARY;
}
inline uint32_t launch_order_bit(const ContextImpl& c) { return launch_order(c) ? kLaunchOrderBit : 0u; }
// The chained scan's and onesweep's knob word: the forced-skip period below bit 30, the launch-order bit
// where `fallback` (the kernel can reduce a stuck predecessor itself), then the statistics bit.
inline uint32_t chained_knobs(const ContextImpl& c, bool fallback) {
  return std::min<uint32_t>(c.options.debug_skip_publication_period, kLaunchOrderBit - 1) |
         (fallback ? launch_order_bit(c) : 0u) | statistics_bit(c.options);
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

inline Result<void> check_type_op(const ContextImpl& c, DataType type, Op op, const char* plan) {
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

// A range the plan reads or writes `bytes` of. required: a null buffer is an error.
inline Result<void> check_range(const BufferRange& r, VkDeviceSize bytes, uint32_t elem, const char* what,
                                bool required) {
  if (!required) return {};
  if (!r.buffer) return make_error(Status::invalid_argument, what, " buffer is VK_NULL_HANDLE");
  if (r.offset % elem)
    return make_error(Status::invalid_argument, what, " offset ", r.offset, " is not a multiple of the element size ",
                      elem);
  if (r.size != VK_WHOLE_SIZE && r.size < bytes)
    return make_error(Status::invalid_argument, what, " range holds ", r.size, " bytes; ", bytes, " are needed");
  return {};
}

inline Result<void> check_scratch(const BufferRange& r, const ScratchRequirements& need, const char* plan) {
  if (need.size == 0) return {};
  if (!r.buffer) return make_error(Status::invalid_argument, plan, ": scratch buffer is VK_NULL_HANDLE but ", need.size,
                                   " bytes are needed");
  if (r.offset % need.alignment)
    return make_error(Status::invalid_argument, plan, ": scratch offset ", r.offset, " is not a multiple of ",
                      need.alignment);
  if (r.size != VK_WHOLE_SIZE && r.size < need.size)
    return make_error(Status::invalid_argument, plan, ": scratch holds ", r.size, " bytes; scratch_requirements() asks ",
                      need.size);
  return {};
}

inline bool overlaps(const BufferRange& a, VkDeviceSize a_bytes, const BufferRange& b, VkDeviceSize b_bytes) {
  if (a.buffer != b.buffer) return false;
  return a.offset < b.offset + b_bytes && b.offset < a.offset + a_bytes;
}

}  // namespace vkprim::detail
