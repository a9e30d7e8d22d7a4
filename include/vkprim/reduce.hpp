// vkprim/reduce.hpp — output[0] = op-reduction of input[0..count) as a multi-level reduction.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/operator.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// The classic progression (Harris, "Optimizing Parallel Reduction in CUDA", 2007), each a complete
// multi-level reduction: a level writes one partial per workgroup, levels repeat until one remains.
// automatic = the fastest measured for the device's class (grid_stride on every device measured), and
// ordered for a user operator (the others pair values out of order, which only commutative operators allow).
// Float results: every algorithm combines in a tree fixed by the plan and the count (no atomics, no
// look-back), so the same plan, input and count give the same bits run to run on one device and driver,
// automatic included. The tree follows the count (grid_stride's grid is min(tiles, its cap)), so two counts
// over a common prefix may round differently.
enum class ReduceAlgorithm {
  automatic,
  interleaved_divergent,   // stride doubles, tid % (2s) == 0 adds
  interleaved_strided,     // stride doubles, index = 2*s*tid (bank conflicts)
  sequential,              // stride halves, tid < s (conflict-free)
  first_add_during_load,   // each thread adds two elements while loading
  unrolled_subgroup,       // last steps as subgroup operations (no warp-synchronous tricks)
  unrolled_complete,       // workgroup size a specialization constant: the whole tree unrolls
  grid_stride,             // many 16-byte vector loads per thread, grid sized to the device
  ordered,                 // tiles reduced left to right (consecutive values per invocation, an ordered
                           // workgroup reduction): for user operators, which need not commute; built for them only
};
const char* to_string(ReduceAlgorithm algorithm);
bool parse(const char* name, ReduceAlgorithm& out);

struct ReduceDesc {
  DataType type = DataType::u32;
  Op op = Op::add;
  uint64_t max_count = 0;
  ReduceAlgorithm algorithm = ReduceAlgorithm::automatic;
  // Bit-identical float results run to run: the same plan, input and count, recorded the same way (record,
  // or record_indirect reading the same count), on the same device and driver give the same output bits.
  // Every algorithm above already keeps this, so it changes no choice; it is here so that code needing the
  // promise says so (as ScanDesc::deterministic does), and any algorithm that combines by timing (atomics,
  // look-back) must be refused or avoided under it.
  bool deterministic = false;
  // Benchmark overrides (types.hpp), grid_stride and ordered: max_workgroups (workgroups in the grid) and
  // vectors_per_thread (16-byte vectors each thread loads per step, 1..16; ordered: values per invocation).
  Tuning tuning{};
  // An engine's element type and combine function (vkprim/operator.hpp), or nullptr. When set, type and op
  // are ignored, elements are user_operator->size bytes, and the algorithm is ordered (automatic).
  const UserOperator* user_operator = nullptr;
};

namespace detail { struct ReducePlan; }

// A plan: create once (builds every pipeline it needs), record many times, from several threads.
// Integer add wraps modulo 2^bits. Float add differs from the exact sum by at most
// (L + ceil(log2 count)) * eps * sum|x_i|, eps = 2^-24 (f32) or 2^-53 (f64), L = sequential_run(count)
// (the longest run one thread sums sequentially). min/max of NaN are unspecified.
class Reduce {
 public:
  // invalid_argument: bitwise op on a float type, max_count 0 or > 2^40, vectors_per_thread > 16; ordered
  // without a user operator or another algorithm with one.
  // unsupported: 64-bit type without shaderInt64/shaderFloat64 (or subgroup int64 with no fallback).
  static Result<Reduce> create(Context& context, const ReduceDesc& desc);
  Reduce(Reduce&&) noexcept;
  Reduce& operator=(Reduce&&) noexcept;
  ~Reduce();

  const ReduceDesc& desc() const;
  ReduceAlgorithm algorithm() const;   // the resolved algorithm (never automatic)
  // Scratch for any count <= max_count, for record and record_indirect: usage STORAGE_BUFFER and
  // INDIRECT_BUFFER, alignment minStorageBufferOffsetAlignment (at least 16). Never 0.
  ScratchRequirements scratch_requirements() const;
  uint64_t sequential_run(uint64_t count) const;
  // Number of dispatches record() issues for `count` (levels x windows).
  uint32_t dispatch_count(uint64_t count) const;

  // output[0] = reduction of input[0..count); count 0 writes the operator's identity.
  // Before: the caller makes input writes visible to compute-shader reads (and scratch/output free of
  // hazards). record places every barrier between its own passes, never submits or waits. After: output
  // is written by compute shaders; the caller adds a barrier (src COMPUTE_SHADER / SHADER_WRITE) before
  // consuming it. Clobbers the bound compute pipeline, descriptor set 0 and push constants. On error
  // nothing is recorded. input/output/scratch must not overlap. input and output: usage STORAGE_BUFFER.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output, uint64_t count,
                      const BufferRange& scratch) const;

  // As record, with the count read on the GPU: a u32 at count_buffer.offset (usage STORAGE_BUFFER, 4-byte
  // aligned), clamped to max_count; workgroup counts are computed on the GPU and issued with vkCmdDispatchIndirect, so no CPU
  // read-back is needed. input must hold max_count elements (only count are read). Before: the caller makes
  // the count's writes visible to compute-shader reads too. Count 0 writes the identity.
  // unsupported: algorithms other than grid_stride and ordered (their level structure follows the count), a
  // max_count past one storage-buffer window (maxStorageBufferRange) or 2^32-1, or more workgroups at
  // max_count than maxComputeWorkGroupCount[0] x [1] (indirect dispatches spill into y only; record() spills
  // into z too).
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                               const BufferRange& count_buffer, const BufferRange& scratch) const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit Reduce(std::unique_ptr<detail::ReducePlan> plan);
  std::unique_ptr<detail::ReducePlan> plan_;
};

}  // namespace vkprim
