// vkprim/topk.hpp — the k smallest or largest keys of an array (with their values), by radix select.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

struct TopKDesc {
  // u32, i32, f32; u64, i64, f64, which with sorted output and max_k above 1024 need shaderInt64 (the sort of
  // the selection).
  // Compared through RadixSort's order-preserving transform (sort.hpp): for floats
  //   -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN
  // so -0.0 counts as smaller than +0.0, and NaNs are the smallest or largest keys by their sign bit.
  DataType key_type = DataType::u32;
  uint32_t value_size = 0;  // 0 = keys only, else 4 (a 4-byte value per key, moved as bits)
  // ascending = the k smallest keys, in ascending order; descending = the k largest, in descending order.
  SortOrder order = SortOrder::ascending;
  uint64_t max_count = 0;   // input keys, 1..2^32-1, within one storage-buffer binding
  uint32_t max_k = 0;       // 1..65536
  // true (the default): the output sorted in `order`, equal keys by input index. false: the same selection (the
  // same keys and values) in an unspecified order, without the sorts that cost most of a record at large k.
  bool sorted = true;
  // 0: the plan has no batched records (record_segmented refuses). Else the most segments one record_segmented
  // takes; create then also builds the SegmentedSort plan those records sort with (max_count below 2^30).
  uint64_t max_segments = 0;
};

namespace detail { struct TopKPlan; }

// A plan: create once (builds every pipeline it needs, and with max_k above 1024 the RadixSort plans that order
// the result), record many times, into many command buffers, from several threads.
// How, on typical inputs one read of the input: a sample pass (32 workgroups, one key each per invocation) reads
// WG x 32 keys (8192) evenly spaced into scratch, and a one-workgroup pass radix-selects among them the threshold,
// the sample of a rank chosen so that at least k keys fall at or below it unless the input's order defeats the
// spacing (src/topk.cpp, kSample); a sieve reads the input once (16-byte loads, at most one wave of resident
// workgroups) and lists those keys with their index (about 6 n / 8192 at k = 1024: 48 Ki of 2^26), staged in
// shared memory and flushed with one global atomic per workgroup, counting their first digit below the
// threshold's leading zeros; a split pass (many workgroups) chooses that digit's bucket of the k-th composite key
// (ordered key, input index), appends the entries below it and moves the bucket's to a second list, and its
// workgroup that finishes last (an atomic ticket; no workgroup waits) radix-selects the rest from that bucket
// (a few hundred entries at k = 1024, about a thousand at 65536; at most 512 left: each entry's rank counted in
// shared memory), appending them.
// When the list holds fewer than k keys or more than its room (all keys equal, few distinct values, an order
// that fools the sample) the record falls back, on the GPU, to the digit passes: 8-bit digits of the key, most
// significant first, each a counting pass whose last workgroup chooses the bucket (those after the bucket is
// decided return at once), a filter after the first digit that copies its bucket to a candidate list (where
// that list, room for max_count keys, fits one storage-buffer binding; else every pass reads the input) and
// counts the second digit; where more keys equal the k-th key than are left to take, a tally of them per chunk
// of the input in index order; and a selection pass (of the earliest of those keys, by the tallies). The
// fallback reads the input twice more, four times with ties. Its passes are always recorded, dispatched
// indirectly with zero workgroups on the sample path (their arguments outside every binding they use, so
// compute-to-compute barriers between them). Then up to 1024 selected keys are ordered by counting each one's
// rank among them (one pass, which also moves the values); more by RadixSort and a gather of the values. With
// sorted output of k <= 1024 the split sends every entry up to the end of its bucket (at most 2048) to that
// pass, which keeps the k smallest, and no refine runs.
// Cost, sample path: one read of the keys, a list of about (k + 6 sqrt(k n / 8192) + 3 n / 8192) keys and
// indices written and read back once by many workgroups, four dispatches plus six of zero workgroups for 32-bit
// keys (ten for 64-bit keys), then the rank pass (k up to 1024) or the sort (one workgroup up to RadixSort's
// one_workgroup_keys()) and, with values, the gather (measured times: docs/PERFORMANCE.md, TopK). Fallback: the
// sieve's read and two more (the first digit's count and the filter), two more with ties (the tally and the
// selection), the candidate list's traffic, the same dispatches running.
class TopK {
 public:
  // After a record completes, the u32 at this word of scratch says which path it took: 0 nothing to select,
  // 1 the sample's single read of the input, 2 the fallback's digit passes (for tests and profiling).
  static constexpr uint32_t kPathWord = 12;

  // invalid_argument: key_type u8 / u16 or unknown, value_size not 0 or 4, an unknown order, max_count 0 or
  // past 2^32-1, max_k outside 1..65536. unsupported: max_count keys past one storage-buffer binding; 64-bit
  // keys, sorted, max_k above 1024, without shaderInt64. With max_segments, SegmentedSort::create's errors too (max_count 2^30 or more:
  // invalid_argument; offsets or lists past one binding: unsupported), their message after "TopK::create: ".
  static Result<TopK> create(Context& context, const TopKDesc& desc);
  TopK(TopK&&) noexcept;
  TopK& operator=(TopK&&) noexcept;
  ~TopK();

  const TopKDesc& desc() const;
  // Scratch for record and record_indirect: usage STORAGE_BUFFER | TRANSFER_DST | INDIRECT_BUFFER, alignment
  // at least 16. It holds the selection state and the samples, the candidate lists (the sample path's two, and
  // the fallback's of max_count keys and indices where it fits one binding, in the same words), the rank list,
  // the selected indices, the fallback's dispatch arguments and the sorts' scratch. With max_segments, the larger of that and
  // record_segmented's: a copy of max_count keys (and values) and the SegmentedSort plan's scratch.
  ScratchRequirements scratch_requirements() const;

  // out_keys[0..n) = the n = min(k, count) smallest keys of keys[0..count) (descending: largest), sorted in the
  // plan's order (desc.sorted false: in an unspecified order); among equal keys the earliest inputs are taken
  // (and, sorted, come first), so the selection is deterministic. k > count is clamped to count; k = 0 or
  // count = 0 records nothing. Values (value_size 4): out_values[i] = values[j] for the input j whose key is
  // out_keys[i]; else values and out_values are ignored (may be BufferRange{}). count <= max_count,
  // k <= max_k. Nothing past out_keys[n) and out_values[n) is written.
  // Every range needs usage STORAGE_BUFFER and an offset that is a multiple of its element size. Not in place:
  // out_keys, out_values and scratch must not overlap each other nor keys or values (invalid_argument).
  // Before: the caller makes the writes of keys and values visible to compute-shader reads, and the outputs
  // and scratch free of hazards (including transfer writes: the sort may clear part of scratch with
  // vkCmdFillBuffer). record places every barrier between its own passes and never submits or waits.
  // After: the outputs are written by compute shaders; the caller adds a barrier (src COMPUTE_SHADER /
  // SHADER_WRITE) before consuming them. Clobbers the bound compute pipeline, descriptor set 0 and push
  // constants. On error nothing is recorded.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values, uint64_t count,
                      uint32_t k, const BufferRange& out_keys, const BufferRange& out_values,
                      const BufferRange& scratch) const;

  // As record, with the count and k read on the GPU: u32s at count_buffer and k_buffer (usage STORAGE_BUFFER,
  // offsets multiples of 4, written before record_indirect like the keys), clamped to max_count and max_k.
  // keys and values must hold max_count elements and out_keys and out_values max_k (only the count's and
  // min(k, count)'s are touched). Every pass is recorded (the grid-stride passes over max_count's grid, the
  // sorts through RadixSort::record_indirect), so the dispatch count depends on neither value. The count and k
  // buffers must not overlap the outputs or scratch.
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                               const BufferRange& count_buffer, const BufferRange& k_buffer,
                               const BufferRange& out_keys, const BufferRange& out_values,
                               const BufferRange& scratch) const;

  // Batched top-k: for every segment s < segments, keys[begin_s .. end_s) with begin_s, end_s the u32 key indices
  // at begin_offsets[s] and end_offsets[s] (as SegmentedSort takes them: any order, gaps, empty segments; the two
  // may be one CSR buffer, end = begin + 4 bytes; segments must not overlap), out_keys[s * k + i] for
  // i < n_s = min(k, end_s - begin_s) = the i-th of the segment's n_s smallest keys (descending: largest), in the
  // plan's order, equal keys by input index (the earliest first and taken first, as record); with values
  // (value_size 4) out_values[s * k + i] = the value of that key's input. Slots s * k + i for i >= n_s (a segment
  // shorter than k, or empty) are left untouched. The output is sorted whatever desc.sorted says.
  // How (this first version): one pass copies keys[0 .. n) (and values) to scratch at the same indices, where
  // n = min(max_count, keys elements) (VK_WHOLE_SIZE: max_count), the whole range the offsets may address, gaps
  // included; the plan's SegmentedSort sorts every segment of the copy stably (its dispatches: SegmentedSort's
  // record); one gather pass (an invocation per segment and slot i < k) writes each segment's first n_s. Cost:
  // the copy (n keys and values read and written), the segmented sort of the copy, segments * k slots gathered;
  // it reads whole segments, so a record over a few long segments costs a sort, not a selection.
  // Offsets are clamped to n (an offset past the keys is the caller's error, as in SegmentedSort).
  // keys and values (value_size 4; else ignored, may be BufferRange{}) hold n elements; begin_offsets and
  // end_offsets `segments` u32 each; out_keys and out_values at least segments * k elements, within one
  // storage-buffer binding. k <= max_k, segments <= max_segments; k = 0 or segments = 0 records nothing.
  // Every range needs usage STORAGE_BUFFER and an offset that is a multiple of its element size. Not in place:
  // inputs are untouched; out_keys, out_values and scratch must not overlap each other nor keys, values or the
  // offsets (the offsets may overlap each other). Scratch: scratch_requirements().
  // Before: the caller makes the writes of keys, values and offsets visible to compute-shader reads, and the
  // outputs and scratch free of hazards (including transfer writes: the segmented sort clears part of scratch
  // with vkCmdFillBuffer). It places every barrier between its own passes, never submits or waits.
  // After: the outputs are written by compute shaders; the caller adds a barrier (src COMPUTE_SHADER /
  // SHADER_WRITE) before consuming them. Clobbers the bound compute pipeline, descriptor set 0 and push
  // constants. invalid_argument, naming TopK::record_segmented and the problem: a plan without max_segments,
  // segments past max_segments, k past max_k, a null, misaligned, short or overlapping range, segments * k
  // outputs past one binding. On error nothing is recorded.
  Result<void> record_segmented(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                const BufferRange& begin_offsets, const BufferRange& end_offsets, uint64_t segments,
                                uint32_t k, const BufferRange& out_keys, const BufferRange& out_values,
                                const BufferRange& scratch) const;

  // As record_segmented, with the segment count read on the GPU: a u32 at segment_count (usage STORAGE_BUFFER,
  // offset a multiple of 4, written before the record like the offsets), clamped to max_segments. begin_offsets
  // and end_offsets hold max_segments u32 (only the counted ones are read); out_keys and out_values hold
  // max_segments * k elements (only the counted segments' slots are written). The segmented sort goes through
  // SegmentedSort::record_indirect and the gather's grid covers max_segments segments, so the dispatches do not
  // depend on the count. The count must not overlap the outputs or scratch. k = 0 records nothing.
  Result<void> record_segmented_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& values,
                                         const BufferRange& begin_offsets, const BufferRange& end_offsets,
                                         const BufferRange& segment_count, uint32_t k, const BufferRange& out_keys,
                                         const BufferRange& out_values, const BufferRange& scratch) const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools (and its sorts'). Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit TopK(std::unique_ptr<detail::TopKPlan> plan);
  std::unique_ptr<detail::TopKPlan> plan_;
};

}  // namespace vkprim
