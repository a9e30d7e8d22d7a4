// vkprim/segmented_sort.hpp — sorts every segment keys[begin[s] .. end[s]) (and its values) in place, stably
// (CUB's DeviceSegmentedSort), with the strategy chosen per segment on the GPU.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// Where a segment's length sends it, in keys (CUB's size classes). The plan resolves them per device from its
// policy table (src/segmented_sort.cpp); a non-zero field of SegmentedSortDesc::thresholds overrides one
// (benchmarks). Segments of 0 or 1 keys are left as they are.
//   length <= small_max: packed with other small segments into batches of up to one block tile and up to 255
//   segments; one workgroup sorts a batch in shared memory (every digit pass, then one over the segments);
//   length <= medium_max: one workgroup per digit pass ranks it whole (one tile of medium_tile_keys() keys)
//   and scatters it, through scratch;
//   length <= block_tile_keys(): one workgroup sorts it in shared memory (a batch of its own);
//   longer (large): a multi-workgroup LSD radix sort of its own over tiles of large_tile_keys() keys, through
//   scratch (SegmentedSortDesc::large_algorithm): onesweep, one histogram pass over the large segments and a
//   scan of it, then per digit one chained pass (decoupled look-back within each segment, with fallback); or
//   reduce_then_scan, per digit an upsweep, a scan of its digit x tile table and a downsweep. A segment of one
//   tile ranks itself whole in the last pass of either.
struct SegmentedSortThresholds {
  uint32_t small_max = 0;   // at most half the block tile and 2048
  uint32_t medium_max = 0;  // at least small_max, at most the medium tile (medium_tile_keys())
};

struct SegmentedSortDesc {
  // u32 i32 f32; u64 i64 f64 where the device has shaderInt64. (u8 and u16 keys: unsupported.)
  DataType key_type = DataType::u32;
  uint32_t value_size = 0;  // 0 = keys only; 4 or 8: a payload moved as bits with its key
  SortOrder order = SortOrder::ascending;  // RadixSort's order transform (sort.hpp): floats by value, NaNs at the ends
  uint64_t max_count = 0;     // keys (and values) the offsets may address, < 2^30
  uint64_t max_segments = 0;  // most segments a record sorts
  // Sort on bits [begin_bit, end_bit) of the transformed key (end_bit 0 = every key bit), as RadixSort.
  uint32_t begin_bit = 0, end_bit = 0;
  // Benchmark override of the large segments' tile: workgroup_size (256, 512 or 1024, within the device's
  // limit) x items_per_thread (1..16). 0 = the policy's.
  Tuning tuning{};
  // Benchmark overrides, as tuning, of the batch tile (block_tile_keys()) and the medium tile
  // (medium_tile_keys()). With a smaller tile than the policy's the default thresholds shrink to fit it.
  Tuning block_tuning{};
  Tuning medium_tuning{};
  SegmentedSortThresholds thresholds{};  // overrides of the resolved thresholds; 0 keeps the plan's
  // The large segments' digit passes, as RadixSort's algorithms: onesweep (needs the vulkanMemoryModel
  // features, as RadixSort's) or reduce_then_scan. automatic: onesweep on GPUs with the memory model,
  // reduce_then_scan on CPU drivers and elsewhere (the policy table in src/segmented_sort.cpp), and where
  // onesweep's scratch lists would pass one storage-buffer binding.
  SortAlgorithm large_algorithm = SortAlgorithm::automatic;
};

namespace detail { struct SegmentedSortPlan; }

// A plan: create once (builds every pipeline it needs), record many times, from several threads.
// Passes of a record: a header clear (vkCmdFillBuffer) and the classify pass (one invocation per segment:
// size classes, batches and lists in scratch), one invocation writing the later passes' dispatch arguments on
// the GPU, the batch pass (one workgroup per batch, dispatched indirectly), then per digit pass one indirect
// dispatch for the medium segments where the keys can hold one, and for the large segments where they can hold
// one a histogram pass, a scan and one chained pass per digit (onesweep) or three per digit (reduce_then_scan:
// upsweep, scan, downsweep), and after an odd number of digit passes a copy back of each: from 3 dispatches up
// to 3 + 4 x digit_passes() (+ 2), record_indirect one more (its count). No workgroup waits on another without
// a fallback: a chained tile counts a stalled predecessor's keys itself.
class SegmentedSort {
 public:
  // invalid_argument: max_count 0 or >= 2^30, max_segments 0, begin_bit / end_bit outside the key or
  // begin >= end, value_size other than 0, 4 or 8, unknown enums, bad tuning or thresholds.
  // unsupported: 64-bit keys without shaderInt64; u8 / u16 keys; large_algorithm onesweep without the memory
  // model features; keys, values, offsets or the scratch
  // lists past one storage-buffer binding (maxStorageBufferRange; lavapipe 128 MiB); tiles that need more
  // shared memory or workgroup invocations than the device has.
  static Result<SegmentedSort> create(Context& context, const SegmentedSortDesc& desc);
  SegmentedSort(SegmentedSort&&) noexcept;
  SegmentedSort& operator=(SegmentedSort&&) noexcept;
  ~SegmentedSort();

  const SegmentedSortDesc& desc() const;
  SegmentedSortThresholds thresholds() const;  // resolved, with the overrides applied
  uint64_t block_tile_keys() const;            // keys a batch may hold
  uint64_t medium_tile_keys() const;           // keys a medium segment may hold
  uint64_t large_tile_keys() const;            // keys per tile of a large segment's digit passes
  uint32_t digit_passes() const;               // ceil((end_bit - begin_bit) / 8)
  SortAlgorithm large_algorithm() const;       // resolved: onesweep or reduce_then_scan
  // Scratch for every record of this plan: usage STORAGE_BUFFER | TRANSFER_DST (the list header is cleared
  // with vkCmdFillBuffer) | INDIRECT_BUFFER (the later passes dispatch from it), alignment
  // max(16, minStorageBufferOffsetAlignment). About 12 bytes per segment of max_segments (lists; 20 where
  // max_count allows medium or large segments), and where max_count allows medium or large segments a copy of
  // max_count keys and values, plus 1 KiB per large tile (onesweep: 1 + digit_passes() KiB per tile and
  // digit_passes() KiB per segment of several tiles).
  ScratchRequirements scratch_requirements() const;

  // Sorts keys[begin[s] .. end[s]) (and values[...] with them when value_size != 0) IN PLACE, stably, for every
  // s < segments; begin and end are u32 key indices read from begin_offsets and end_offsets (each `segments`
  // u32; usage STORAGE_BUFFER; they may be one buffer, as CSR offsets: end = begin + 4 bytes). Segments may come
  // in any order and leave gaps (keys in no segment are untouched); a segment with end <= begin + 1 is left as it
  // is. Segments must not overlap: overlapping segments are the caller's error, whose keys and values come out
  // undefined, but nothing outside the keys and values ranges is written. Offsets are clamped to
  // min(max_count, keys elements), so an offset past the keys is the caller's error of the same kind.
  // keys, values: usage STORAGE_BUFFER, offsets multiples of the key / value size, at least one element; values
  // is ignored (may be null) for keys only, else it holds as many elements as keys. keys, values, offsets and
  // scratch must not overlap (offsets may overlap each other).
  // Before: the caller makes the writes of keys, values and offsets visible to compute-shader reads (scratch
  // free of hazards, including transfer writes). record places every barrier between its own passes, never
  // submits or waits. After: keys and values are written by compute shaders; the caller adds a barrier (src
  // COMPUTE_SHADER / SHADER_WRITE) before use. Clobbers the bound compute pipeline, descriptor set 0 and push
  // constants. On error nothing is recorded. segments 0 records nothing.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                      const BufferRange& begin_offsets, const BufferRange& end_offsets, uint64_t segments,
                      const BufferRange& scratch) const;

  // As record, with segment s = keys[s * segment_size .. (s + 1) * segment_size) and no offset buffers:
  // segments * segment_size must not exceed max_count, and keys (and values) must hold that many elements.
  // The segment size leaves out the passes of the classes it is not in (one class's passes only).
  Result<void> record_fixed(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                            uint64_t segment_size, uint64_t segments, const BufferRange& scratch) const;

  // As record, with the segment count read on the GPU: a u32 at segment_count.offset (usage STORAGE_BUFFER,
  // 4-byte aligned, written before record_indirect like the offsets), clamped to max_segments; the classify
  // pass's workgroups come from one more small pass (indirect/args). begin_offsets and end_offsets must hold
  // max_segments u32 (only the counted ones are read). The dispatches do not depend on the count.
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                               const BufferRange& begin_offsets, const BufferRange& end_offsets,
                               const BufferRange& segment_count, const BufferRange& scratch) const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit SegmentedSort(std::unique_ptr<detail::SegmentedSortPlan> plan);
  std::unique_ptr<detail::SegmentedSortPlan> plan_;
};

}  // namespace vkprim
