// vkprim/sort.hpp — stable LSD radix sort of keys (and key-value pairs), in place.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// Key order. Keys are compared through an order-preserving transform of their bits: unsigned as is,
// signed integers with the sign bit flipped, floats with every bit flipped when the sign is set and only
// the sign bit otherwise. Ascending float order is therefore
//   -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN
// (-0.0 sorts before +0.0; NaNs go to the ends by their sign bit, ordered by payload). descending is the
// exact reverse key order; both are stable (equal keys keep their input order).
enum class SortOrder { ascending, descending };
const char* to_string(SortOrder order);
bool parse(const char* name, SortOrder& out);

// Both are least-significant-digit radix sorts with 8-bit digits, one stable counting pass per digit:
//   onesweep          Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs"
//                     (2022): one upfront pass histograms every digit at once, then ONE chained pass per
//                     digit (tiles rank their keys, publish per-digit counts and look back over
//                     predecessors), with the decoupled fallback of Smith, Levien & Owens (SPAA 2025), so it
//                     terminates without forward progress between workgroups. Needs vulkanMemoryModel +
//                     vulkanMemoryModelDeviceScope (device_requirements() lists them).
//   reduce_then_scan  portable: per digit an upsweep (digit counts per workgroup), a scan of the digit x
//                     workgroup table and a downsweep (stable rank + scatter). Three dispatches per digit.
// automatic = onesweep where the memory model is enabled, else reduce_then_scan (onesweep measured faster for
// keys and pairs on the H100: docs/PERFORMANCE.md); and counts that fit one workgroup's tile are sorted
// by that one workgroup in a single dispatch (RadixSort::one_workgroup_keys()). An explicit algorithm takes
// its own passes at every count.
enum class SortAlgorithm { automatic, onesweep, reduce_then_scan };
const char* to_string(SortAlgorithm algorithm);
bool parse(const char* name, SortAlgorithm& out);

// How the ranking kernels find the keys of a subgroup that share a digit:
//   ballots      eight subgroup ballots per key (any device with ballot + shuffle);
//   partitioned  one subgroupPartitionNV per key (VK_NV_shader_subgroup_partitioned: feature_subgroup_partitioned;
//                device_requirements() lists the extension where the device has it).
// automatic = ballots (partitioned measured slower on the H100: docs/PERFORMANCE.md). partitioned is built
// only with the CMake option VKPRIM_SORT_OPTION_KERNELS (VKPRIM_HAS_SORT_OPTION_KERNELS in vkprim/version.hpp):
// elsewhere unsupported.
enum class SortRanking { automatic, ballots, partitioned };
const char* to_string(SortRanking ranking);
bool parse(const char* name, SortRanking& out);

// How a ranked tile reaches its output positions:
//   staged  through shared memory, so consecutive invocations write consecutive positions of a digit's run
//           (coalesced writes; two more barriers and a shared round trip per tile, and per payload);
//   direct  each invocation writes its keys (and values) straight from registers to their positions.
// automatic = staged (direct measured slower on the H100: docs/PERFORMANCE.md). direct, like partitioned
// ranking, is built only with VKPRIM_SORT_OPTION_KERNELS: elsewhere unsupported.
enum class SortScatter { automatic, staged, direct };
const char* to_string(SortScatter scatter);
bool parse(const char* name, SortScatter& out);

struct SortDesc {
  // u32 i32 f32; u64 i64 f64 where the device has shaderInt64; u8 and u16 (one and two digit passes) where it
  // has 8- and 16-bit storage (feature_storage_8bit, feature_storage_16bit).
  DataType key_type = DataType::u32;
  // 0 = keys only; else a payload of that many bytes moved as bits: any multiple of 4 up to 64. Payloads
  // over 8 bytes move through shared memory in rounds, in 16-byte units where the size is a multiple of 16
  // (so 16, 32, 48 and 64 move fastest) and 4-byte units otherwise.
  uint32_t value_size = 0;
  SortOrder order = SortOrder::ascending;
  uint64_t max_count = 0;
  // Sort on bits [begin_bit, end_bit) of the transformed key (end_bit 0 = every key bit); keys equal on
  // those bits keep their input order. One digit pass per 8 bits (the last may be narrower).
  uint32_t begin_bit = 0, end_bit = 0;
  SortAlgorithm algorithm = SortAlgorithm::automatic;
  // Benchmark overrides (types.hpp; 0 = the tuned default on GPUs: onesweep 384 x 18 for 32-bit keys,
  // 384 x 22 with 4-byte values, 384 x 14 with 8-byte keys or values, 384 x 12 with wider values;
  // reduce_then_scan 512 x 8; 256 x 8 on CPU drivers): a tile is tuning.workgroup_size (a multiple of 128,
  // 256..1024) x tuning.items_per_thread (1..32) keys, at most 32768. An override, like an explicit ranking or scatter, also turns off the one-workgroup sort.
  Tuning tuning{};
  SortRanking ranking = SortRanking::automatic;   // unsupported: partitioned without the extension
  SortScatter scatter = SortScatter::automatic;
};

namespace detail { struct SortPlan; }

// A plan: create once (builds every pipeline it needs), record many times, into many command buffers,
// from several threads.
// Limits: max_count < 2^30 (onesweep's tile state packs a 30-bit count with its flag; the same limit is
// kept for both algorithms), and max_count keys (and values) must fit one storage-buffer binding
// (maxStorageBufferRange; lavapipe: 128 MiB = 2^25 u32 keys): larger counts are refused (unsupported)
// rather than sorted window by window.
class RadixSort {
 public:
  // invalid_argument: max_count 0 or >= 2^30, begin_bit/end_bit outside the key or begin >= end,
  // value_size not a multiple of 4 up to 64, unknown enums, bad tuning overrides. unsupported: 64-bit keys
  // without shaderInt64; u8 / u16 keys without 8- / 16-bit storage, or with partitioned ranking or the direct
  // scatter; onesweep without the Vulkan memory model; keys or values past one binding's range; a tile that
  // needs more shared memory than the device has.
  static Result<RadixSort> create(Context& context, const SortDesc& desc);
  RadixSort(RadixSort&&) noexcept;
  RadixSort& operator=(RadixSort&&) noexcept;
  ~RadixSort();

  const SortDesc& desc() const;
  SortAlgorithm algorithm() const;  // the resolved algorithm (never automatic)
  SortRanking ranking() const;      // the resolved ranking (never automatic)
  SortScatter scatter() const;      // the resolved scatter (never automatic)
  // Scratch for any count <= max_count, for record and record_indirect: usage STORAGE_BUFFER |
  // TRANSFER_DST (cleared with vkCmdFillBuffer) | INDIRECT_BUFFER, alignment max(16, minStorageBufferOffsetAlignment).
  // It holds the ping-pong copy of the keys (and values), the digit histograms or table and onesweep's
  // tile state (256 words per tile); a plan whose max_count is at most one_workgroup_keys() needs none of
  // them and asks only for a small header and record_indirect's region (a few hundred bytes).
  ScratchRequirements scratch_requirements() const;
  // Keys per tile (workgroup_size x items_per_thread as resolved for the device).
  uint64_t keys_per_tile() const;
  // Keys per tile of the digit passes that record() takes for `count`, and record_indirect() for max_count:
  // automatic onesweep plans (the one-workgroup sort's conditions below) take smaller tiles while a count
  // fills few of them (on GPUs 512 x 4 keys up to 64 tiles, then 512 x 8 up to 256; CPU drivers 256 x 4),
  // else keys_per_tile(). Scratch covers every count up to max_count either way. (Counts up to
  // one_workgroup_keys() take no digit passes.)
  uint64_t keys_per_tile(uint64_t count) const;
  // Counts up to this many are sorted by one workgroup in one dispatch, every digit pass in shared memory
  // (no scratch traffic, no odd-pass copy): automatic plans of keys with no payload or a 4- or 8-byte one,
  // with no tile, ranking or scatter override. A count takes the smallest of the tiles 256 x 4, 512 x 4,
  // 512 x 8 (and 256 x 16, 512 x 16 where onesweep has no smaller tiles: keys_per_tile(count)) that holds
  // it, among those the device's workgroup and shared-memory limits allow: on NVIDIA up to 4096 keys.
  // Independent of max_count. 0: every count takes `algorithm()`'s passes.
  uint64_t one_workgroup_keys() const;
  // Rounds in which onesweep stages a ranked tile in shared memory before scattering it: 1, or 2 where a
  // whole tile would need more than 24 KiB (above that NVIDIA runs one workgroup per SM instead of two).
  uint32_t staging_rounds() const;
  // Number of digit passes (ceil((end_bit - begin_bit) / 8)). When it is odd the sort ends with a copy
  // from scratch back to the caller's buffers (an even count ends in place by itself).
  uint32_t digit_passes() const;
  // Dispatches record() issues for `count`: 0 for count <= 1 (already sorted), 1 up to one_workgroup_keys().
  uint32_t dispatch_count(uint64_t count) const;
  // Onesweep: byte offset within scratch of four u32 counters the last record left, summed over its digit
  // passes: {tiles, fallbacks taken, look-back steps of digit 0 (a step reads four predecessor tiles),
  // deepest look-back of digit 0 in steps}; all but the fallbacks stay 0 unless
  // ContextOptions::collect_statistics.
  VkDeviceSize statistics_offset() const;

  // Sorts keys[0..count) (and values[0..count) with them when value_size != 0) IN PLACE, stably.
  // keys and values: usage STORAGE_BUFFER, offsets multiples of the key / value size (values of 16, 32, 48
  // or 64 bytes: multiples of 16); values is ignored
  // (may be null) for keys only. keys, values and scratch must not overlap. count <= 1 records nothing.
  // Before: the caller makes keys/values writes visible to compute-shader reads (and scratch free of
  // hazards, including transfer writes: onesweep may clear a small scratch header with vkCmdFillBuffer).
  // record places every barrier between its own passes, never submits or waits. After: keys and values
  // are written by compute shaders; add a barrier (src COMPUTE_SHADER / SHADER_WRITE) before use.
  // Clobbers the bound compute pipeline, descriptor set 0 and push constants. On error nothing is recorded.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values, uint64_t count,
                      const BufferRange& scratch) const;

  // As record, with the count read on the GPU from a u32 at count_buffer (usage STORAGE_BUFFER, offset a
  // multiple of 4, written before record_indirect like the keys), clamped to max_count. keys and values
  // must hold max_count elements (only the count's are touched). Every pass is
  // recorded (dispatched indirectly), so the dispatch count does not depend on the count; a plan whose
  // max_count is at most one_workgroup_keys() records the one-workgroup sort alone.
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                               const BufferRange& count_buffer, const BufferRange& scratch) const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit RadixSort(std::unique_ptr<detail::SortPlan> plan);
  std::unique_ptr<detail::SortPlan> plan_;
};

}  // namespace vkprim
