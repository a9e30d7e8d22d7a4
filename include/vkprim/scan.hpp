// vkprim/scan.hpp — prefix scans (inclusive and exclusive) as multi-level plans.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/operator.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// inclusive: output[i] = x[0] op ... op x[i]. exclusive: output[0] = identity, output[i] = x[0] op ... op x[i-1].
// The identity is 0 for add/bit_or/bit_xor, the largest value (+inf for floats) for min, the lowest
// (-inf for floats) for max, and all ones for bit_and.
enum class ScanKind { inclusive, exclusive };
const char* to_string(ScanKind kind);
bool parse(const char* name, ScanKind& out);

// The classic progression, each a complete multi-level scan (every level a dispatch with a barrier):
//   hillis_steele     Hillis & Steele 1986: ceil(log2 n) global passes (at least 2), double buffer in scratch.
//   blelloch_global   Blelloch 1990: global up-sweep and down-sweep passes over a power-of-two array in scratch.
//   blocked_blelloch  Harris, Sengupta & Owens, GPU Gems 3 ch. 39: Blelloch per workgroup in shared memory
//                     (2 elements per thread), block sums scanned recursively, carries added back.
//   subgroup_blocked  as blocked, with subgroup inclusive scans inside the block.
//   reduce_then_scan  Merrill & Garland 2016 (background): reduce tiles of 16-byte vectors, scan the tile
//                     sums, rescan each tile with its carry-in. ~3n memory traffic.
//   chained_lookback  Merrill & Garland 2016: ONE pass (plus a clear of the tile state). Tiles take an
//                     index from an atomic ticket, publish their aggregate, look back over predecessors (a
//                     subgroup inspects as many as it has lanes) and publish their inclusive prefix. Needs
//                     forward progress between workgroups: a tile spins until its predecessor publishes,
//                     so where the device may leave that predecessor unscheduled while spinning tiles
//                     occupy it (Vulkan promises nothing here), the dispatch can hang and lose the device.
//                     Refused (unsupported) on drivers known to give no such progress: lavapipe (its
//                     loops also stop after 65535 iterations), MoltenVK, Arm's Mali driver and PanVK. Use it only on desktop GPUs where it is measured faster.
//   chained_fallback  Smith, Levien & Owens, SPAA 2025: as chained_lookback, but after
//                     ContextOptions::fallback_spin_limit not-ready polls the tile reduces the stuck
//                     predecessor's input itself and publishes it (atomicMax: states only move forward).
//                     Correct and terminating with no forward-progress guarantee (Apple, Mali, CPU drivers).
//   Both need vulkanMemoryModel + vulkanMemoryModelDeviceScope (device_requirements() lists them); the
//   tile state carries the full value: where shaderBufferInt64Atomics is enabled one 64-bit atomic word
//   for a 32-bit type and one per word of a user operator's value, else 16-bit parts over u32 words.
// automatic = chained_fallback where the memory model is enabled, else reduce_then_scan; with
// ScanDesc::deterministic on a float type or a user operator, reduce_then_scan. User operators: chained_fallback
// only for values of at most 16 bytes in plans of max_count >= 2^20, else reduce_then_scan.
// Float results: every algorithm but the chained ones combines in a tree fixed by the plan and the count,
// so its bits repeat run to run on one device and driver. The chained scans fold their predecessors'
// aggregates in whatever grouping the race between tiles leaves, so float results may differ in the last
// bits between runs (float add always within the float_add_depth bound below). Integer results are the same
// bits under any grouping.
enum class ScanAlgorithm {
  automatic,
  hillis_steele,
  blelloch_global,
  blocked_blelloch,
  subgroup_blocked,
  reduce_then_scan,
  chained_lookback,
  chained_fallback,
};
const char* to_string(ScanAlgorithm algorithm);
bool parse(const char* name, ScanAlgorithm& out);

struct ScanDesc {
  DataType type = DataType::u32;
  Op op = Op::add;
  ScanKind kind = ScanKind::inclusive;
  uint64_t max_count = 0;
  ScanAlgorithm algorithm = ScanAlgorithm::automatic;
  // The plan will be recorded in place (input and output the same buffer and offset): automatic then
  // resolves to an algorithm that scans in place on this device (chained_lookback where the driver gives
  // forward progress and the memory model is enabled, else reduce_then_scan, or what deterministic and user
  // operators ask), and an explicit chained_fallback is invalid_argument. Without it, an automatic plan may
  // resolve to chained_fallback, whose record refuses in place.
  bool in_place = false;
  // Bit-identical float results run to run: the same plan, input and count, recorded the same way (record,
  // or record_indirect reading the same count), on the same device and driver give the same output bits.
  // For f32 and f64, automatic then resolves to reduce_then_scan (a fixed combination tree) and an explicit
  // chained_lookback or chained_fallback is invalid_argument (their look-back groups by timing). Integer
  // types keep their algorithm: integer operators give the same bits in any grouping. Nothing is promised
  // across plans, counts, devices or drivers (the tree follows the count and the device's subgroup size).
  bool deterministic = false;
  // Chained scans: benchmark overrides (types.hpp; 0 = the tuned default). A tile is tuning.workgroup_size
  // (a power of two, 64..1024) x tuning.vectors_per_thread (1..8) vectors of 16 bytes. Tuned default: 256 x 4,
  // and 256 x 8 for chained_fallback on integer types on NVIDIA's driver for windows of 2^25 elements or
  // more (a plan whose max_count reaches 2^25 keeps both and picks per window; record_indirect takes
  // max_count's). A vectors_per_thread override fixes one shape for every count. User operators: values
  // per invocation instead of vectors (1..16), by default the largest power of two up to 16 within 128
  // bytes of them for values up to 32 bytes, within 64 bytes for larger ones.
  // tuning.lookback_windows: subgroup-wide windows of predecessor states one look-back step loads at once
  // (1..8): a step covers lookback_windows x subgroup size predecessors.
  Tuning tuning{};
  // An engine's element type and combine function (vkprim/operator.hpp), or nullptr. When set, type and op
  // are ignored, elements are user_operator->size bytes (a 16-byte "vector" above is one element), and the
  // algorithm is reduce_then_scan (bit-reproducible), chained_lookback or chained_fallback (faster from
  // about 2^20 elements for cheap combines, a vec4 sum or a box union; slower for costly ones, such as
  // composing affine maps); automatic picks as above. Every one keeps the operands in order, so the
  // operator need not commute. The exclusive scan starts from the operator's identity. Under deterministic
  // it is treated as a float type.
  const UserOperator* user_operator = nullptr;
};

namespace detail { struct ScanPlan; }

// A plan: create once (builds every pipeline it needs), record many times, into many command buffers,
// from several threads. Integer add wraps modulo 2^bits. min/max of NaN are unspecified.
// Float add: output[i] differs from the exact prefix by at most float_add_depth(count) * eps * S_i, where
// S_i = sum of |x_j| over the elements output[i] covers, eps = 2^-24 (f32) or 2^-53 (f64).
class Scan {
 public:
  // invalid_argument: bitwise op on a float type, max_count 0 or > 2^40, deterministic with a chained
  // algorithm on a float type or a user operator, a user operator with an algorithm other than the three above.
  // unsupported: 64-bit type without shaderInt64/shaderFloat64; a chained algorithm without the Vulkan
  // memory model features.
  static Result<Scan> create(Context& context, const ScanDesc& desc);
  Scan(Scan&&) noexcept;
  Scan& operator=(Scan&&) noexcept;
  ~Scan();

  const ScanDesc& desc() const;
  ScanAlgorithm algorithm() const;   // the resolved algorithm (never automatic)
  // Scratch for any count <= max_count, for record and record_indirect: usage STORAGE_BUFFER |
  // TRANSFER_DST (chained scans clear their tile state with vkCmdFillBuffer) | INDIRECT_BUFFER, alignment
  // minStorageBufferOffsetAlignment
  // (at least 16). Never 0: every plan keeps at least its level sums or working arrays there.
  ScratchRequirements scratch_requirements() const;
  // Number of dispatches record() issues for `count` (passes x windows); 0 for count 0.
  uint32_t dispatch_count(uint64_t count) const;
  // Longest chain of dependent operations behind any output (the float add error bound above).
  uint64_t float_add_depth(uint64_t count) const;

  // output[0..count) = the scan of input[0..count); count 0 records nothing (after the checks). input and
  // output: usage STORAGE_BUFFER.
  // In place (input and output the same buffer and offset) works for every algorithm but
  // chained_fallback (a fallback re-reads a predecessor's input while it may be overwritten); partially
  // overlapping input/output ranges, or scratch overlapping either, are invalid_argument.
  // Before: the caller makes input writes visible to compute-shader reads (and scratch/output free of
  // hazards, including transfer writes: chained scans clear their tile state with vkCmdFillBuffer). record places every barrier between its own passes, never submits or waits. After: output
  // is written by compute shaders; the caller adds a barrier (src COMPUTE_SHADER / SHADER_WRITE) before
  // consuming it. Clobbers the bound compute pipeline, descriptor set 0 and push constants. On error
  // nothing is recorded. Inputs past maxStorageBufferRange are scanned window by window, the running
  // total carried between windows through scratch.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output, uint64_t count,
                      const BufferRange& scratch) const;

  // As record, with the count read on the GPU: a u32 at count_buffer.offset (usage STORAGE_BUFFER, 4-byte
  // aligned), clamped to max_count; tile and block counts are computed on the GPU and issued with vkCmdDispatchIndirect, so no
  // CPU read-back is needed. input and output must hold max_count elements (only count are touched); count
  // 0 writes nothing. Before: the caller makes the count's writes visible to compute-shader reads too.
  // unsupported: algorithms other than chained_lookback, chained_fallback and reduce_then_scan (the others
  // size their passes on the CPU), max_count past one storage-buffer window (maxStorageBufferRange) or
  // 2^32-1, or (reduce_then_scan) past 2^29 32-bit elements (two levels of tile sums); or more tiles at
  // max_count than maxComputeWorkGroupCount[0] x [1] (indirect dispatches spill into y only; record() spills
  // into z too).
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& input, const BufferRange& output,
                               const BufferRange& count_buffer, const BufferRange& scratch) const;

  // Chained scans only: byte offset within scratch of four u32 counters the last window's dispatch left:
  // {tiles started, fallbacks taken, look-back steps (summed over tiles), deepest look-back}; steps and
  // depth stay 0 unless ContextOptions::collect_statistics.
  VkDeviceSize statistics_offset() const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit Scan(std::unique_ptr<detail::ScanPlan> plan);
  std::unique_ptr<detail::ScanPlan> plan_;
};

}  // namespace vkprim
