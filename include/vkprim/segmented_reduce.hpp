// vkprim/segmented_reduce.hpp — output[s] = op-reduction of input[begin[s] .. end[s]) for every segment s
// (CUB's DeviceSegmentedReduce), with the strategy chosen per segment on the GPU.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/operator.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// Where a segment's length sends it, in elements. The plan resolves them per device from its policy table
// (src/segmented_reduce.cpp); a non-zero field of SegmentedReduceDesc::thresholds overrides one (benchmarks).
//   length <= short_max: its own invocation reduces it in the first pass (millions of tiny segments);
//   length <= medium_max: one subgroup reduces it (one workgroup where the plan takes the shared-memory
//   emulation of subgroups);
//   longer (huge): split in chunks of `chunk` elements, one workgroup each, whose partials are then combined
//   in order by one workgroup per segment.
struct SegmentThresholds {
  uint32_t short_max = 0;
  uint32_t medium_max = 0;  // at least short_max
  uint32_t chunk = 0;       // at least 1
};

struct SegmentedReduceDesc {
  DataType type = DataType::u32;
  Op op = Op::add;
  uint64_t max_segments = 0;  // most segments a record reduces
  uint64_t max_count = 0;     // most input elements the offsets may address
  // An engine's element type and combine function (vkprim/operator.hpp), or nullptr. When set, type and op
  // are ignored and elements are user_operator->size bytes.
  const UserOperator* user_operator = nullptr;
  // Benchmark overrides (types.hpp): workgroup_size (a power of two from 64 to 1024 and a multiple of the
  // device's largest subgroup), vectors_per_thread (16-byte vectors each lane loads per step, 1..16) and
  // max_workgroups (the grid of the passes after the first).
  Tuning tuning{};
  SegmentThresholds thresholds{};  // overrides of the resolved thresholds; 0 keeps the plan's
};

namespace detail { struct SegmentedReducePlan; }

// A plan: create once (builds every pipeline it needs), record many times, from several threads.
// Passes: the first pass gives each segment one invocation, reduces the short ones and lists the longer ones
// in scratch; the ranges pass reduces the listed medium segments and the chunks of huge ones; the combine pass
// folds each huge segment's chunk partials. A record issues only the passes its max_count (or, for
// record_fixed, its segment size) can need: at most three dispatches (record_indirect one more, for its
// arguments), and a header clear with vkCmdFillBuffer where there are lists; none waits on another workgroup.
// Order and results: integer add wraps modulo 2^bits. Every value is combined in a tree fixed by the plan,
// the device and the segment's offsets (no atomics combine values), so float results repeat bit for bit run
// to run, except where overlapping huge segments overflow the scratch lists (below). Float add differs from
// the exact sum of a segment of n elements by at most (sequential_run(n) + ceil(log2 n) + 1) * eps * sum|x_i|,
// eps = 2^-24 (f32) or 2^-53 (f64). min/max of NaN are unspecified. A user operator need not commute: every
// segment gets the left-to-right combination.
class SegmentedReduce {
 public:
  // invalid_argument: max_segments or max_count 0, a bitwise op on a float type, a tuning field out of its
  // range or one the plan does not read, thresholds with medium_max < short_max.
  // unsupported: a 64-bit type without shaderInt64 / shaderFloat64; max_count or max_segments past one
  // storage-buffer binding (maxStorageBufferRange: on lavapipe 2^25 u32) or the scratch lists past one.
  static Result<SegmentedReduce> create(Context& context, const SegmentedReduceDesc& desc);
  SegmentedReduce(SegmentedReduce&&) noexcept;
  SegmentedReduce& operator=(SegmentedReduce&&) noexcept;
  ~SegmentedReduce();

  const SegmentedReduceDesc& desc() const;
  SegmentThresholds thresholds() const;  // resolved, with the overrides applied
  uint32_t medium_lanes() const;         // lanes that share a medium segment: a subgroup, or (emulation) a workgroup
  // The longest run of elements one invocation combines in order in a segment of `length` elements (the
  // float-add bound above).
  uint64_t sequential_run(uint64_t length) const;
  // Scratch for every record of this plan: usage STORAGE_BUFFER, INDIRECT_BUFFER and TRANSFER_DST (the list
  // header is cleared with vkCmdFillBuffer), alignment minStorageBufferOffsetAlignment (at least 16). About
  // 4 bytes per segment of max_segments (the medium list) plus one word and one value per chunk of max_count.
  ScratchRequirements scratch_requirements() const;

  // output[s] = reduction of input[begin[s] .. end[s]) for s < segments, begin and end u32 element indices
  // read from begin_offsets and end_offsets (each `segments` u32; usage STORAGE_BUFFER; they may be one buffer,
  // as CSR row offsets: end = begin + 4 bytes). A segment with end <= begin gets the operator's identity.
  // Segments may come in any order, overlap and leave gaps. The input range holds the elements the offsets
  // address: offsets are clamped to min(max_count, input elements), so an offset past it is the caller's
  // error whose segment's output is undefined, but nothing outside the input range is read. Overlapping huge
  // segments that need more scratch than max_count elements would without overlap are reduced by one subgroup
  // each (correct, slower, and their float sums may round differently from run to run).
  // Before: the caller makes the writes of input and offsets visible to compute-shader reads (scratch and
  // output free of hazards, including transfer writes to scratch). record places every barrier between its
  // own passes, never submits or waits. After: output is written by compute shaders; the caller adds a
  // barrier (src COMPUTE_SHADER / SHADER_WRITE) before consuming it. Clobbers the bound compute pipeline,
  // descriptor set 0 and push constants. On error nothing is recorded. output must not overlap input,
  // offsets or scratch, nor scratch the input or offsets. segments 0 records nothing.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                      const BufferRange& begin_offsets, const BufferRange& end_offsets, uint64_t segments,
                      const BufferRange& scratch) const;

  // As record, with segment s = input[s * segment_size .. (s + 1) * segment_size) and no offset buffers:
  // segments * segment_size must not exceed max_count, and input must hold that many elements. The segment
  // size picks the passes on the CPU (one dispatch below the huge threshold, two above).
  Result<void> record_fixed(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                            uint64_t segment_size, uint64_t segments, const BufferRange& scratch) const;

  // As record, with the segment count read on the GPU: a u32 at segment_count.offset (usage STORAGE_BUFFER,
  // 4-byte aligned), clamped to max_segments; the first pass's workgroups are computed on the GPU and issued
  // with vkCmdDispatchIndirect. output, begin_offsets and end_offsets must hold max_segments elements (only
  // the counted ones are read or written). Before: the count's writes are visible to compute-shader reads too.
  // unsupported: more workgroups at max_segments than maxComputeWorkGroupCount[0] x [1].
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                               const BufferRange& begin_offsets, const BufferRange& end_offsets,
                               const BufferRange& segment_count, const BufferRange& scratch) const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit SegmentedReduce(std::unique_ptr<detail::SegmentedReducePlan> plan);
  std::unique_ptr<detail::SegmentedReducePlan> plan_;
};

}  // namespace vkprim
