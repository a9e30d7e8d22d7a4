// vkprim/reduce_by_key.hpp — ReduceByKey: one aggregate per run of equal adjacent keys (CUB's
// DeviceReduce::ReduceByKey). The keyed primitives (this one, ScanByKey, RunLengthEncode, NonTrivialRuns and
// Unique) share the contract written here.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/operator.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

namespace detail { struct ByKeyPlan; }

// Shared by the keyed primitives.
//  Runs: maximal stretches of adjacent elements whose keys are equal, as in CUB. Keys are compared by their
//   bits, whatever key_type says: for f32/f64 keys -0.0 and +0.0 differ and a NaN equals the same NaN.
//  Algorithm (KeyedAlgorithm, below): each tile of workgroup_size x items_per_thread elements summarizes
//   itself (run count, and the value of the run it leaves open).
//   - chained: one pass (plus a clear of the tile state) chains the summaries with decoupled look-back
//     (Merrill & Garland 2016) and decoupled fallback (Smith, Levien & Owens, SPAA 2025): it terminates
//     without forward progress between workgroups. Needs vulkanMemoryModel + vulkanMemoryModelDeviceScope
//     (device_requirements() lists them): without them an explicit chained is unsupported at create.
//   - reduce_then_scan: three dispatches, portable to any device: the tiles store their summaries, one
//     workgroup scans them, the tiles read their prefixes and write. It reads the inputs twice.
//   - automatic: chained where the memory model is enabled, else reduce_then_scan.
//  Counts: max_count <= 2^32-1, and max_count keys (and values) must fit one storage-buffer binding
//   (maxStorageBufferRange): larger plans are unsupported at create. The run count is written by the GPU as
//   a u32; outputs sized for `count` elements are written only below the run count.
//  Plans: create once, record many times, into many command buffers, from several threads. Values move
//   through the operator; keys and indices as raw bits.
//  Not in place: every output range (and scratch, and count_buffer) must be disjoint from every other range
//   (invalid_argument); the inputs (keys, values) may share memory with each other.
//  Before record: the caller makes the inputs' writes visible to compute-shader reads, and the scratch free of
//   hazards including transfer writes (the tile state is cleared with vkCmdFillBuffer). After: the outputs
//   are written by compute shaders; the caller adds a barrier (src COMPUTE_SHADER / SHADER_WRITE) before
//   consuming them. record clobbers the bound compute pipeline, descriptor set 0 and push constants. On
//   error nothing is recorded.
//  record_indirect: the count is a u32 read on the GPU from count_buffer (4-byte aligned, written before with
//   a barrier to compute-shader reads), clamped to max_count; ranges are checked for max_count elements.
//   unsupported at record_indirect: max_count past one storage-buffer window, or more tiles at max_count
//   than maxComputeWorkGroupCount[0] x [1] (indirect dispatches spill into y only; record() spills into z).
//  Tuning (benchmark overrides, types.hpp; 0 = the tuned default): tuning.workgroup_size a power of two
//   64..1024, tuning.items_per_thread a multiple of 4
//   from 4 to 32.

enum class KeyedAlgorithm { automatic, chained, reduce_then_scan };
const char* to_string(KeyedAlgorithm algorithm);
bool parse(const char* name, KeyedAlgorithm& out);

struct ReduceByKeyDesc {
  DataType key_type = DataType::u32;    // compared as bits (u32/i32/f32: one word; u64/i64/f64: two)
  DataType value_type = DataType::u32;  // any type the device supports
  Op op = Op::add;                      // bitwise operators for integer values only
  uint64_t max_count = 0;               // 1..2^32-1
  Tuning tuning{};                      // workgroup_size and items_per_thread (above)
  // An engine's value type and combine function (vkprim/operator.hpp), or nullptr. When set, value_type and
  // op are ignored and values are user_operator->size bytes; runs combine left to right, so the operator
  // need not commute.
  const UserOperator* user_operator = nullptr;
  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic;
};

// The buffers of one ReduceByKey record, by name; every range needs usage STORAGE_BUFFER, scratch what
// scratch_requirements() says.
struct ReduceByKeyOperands {
  BufferRange keys, values;  // the inputs, `count` elements each
  BufferRange unique_keys;   // `count` keys
  BufferRange aggregates;    // `count` values
  BufferRange run_count;     // one u32, offset a multiple of 4
  BufferRange scratch;
};

class ReduceByKey {
 public:
  // invalid_argument: max_count 0 or > 2^32-1, a bitwise operator on float values, bad tuning, an unknown
  // algorithm. unsupported: 64-bit types without shaderInt64/shaderFloat64, chained without the memory model,
  // max_count past one binding, a value type the build left out (VKPRIM_TYPES).
  static Result<ReduceByKey> create(Context& context, const ReduceByKeyDesc& desc);
  ReduceByKey(ReduceByKey&&) noexcept;
  ReduceByKey& operator=(ReduceByKey&&) noexcept;
  ~ReduceByKey();

  const ReduceByKeyDesc& desc() const;
  // Scratch for any count <= max_count: usage STORAGE_BUFFER | TRANSFER_DST | INDIRECT_BUFFER, alignment >= 16.
  ScratchRequirements scratch_requirements() const;
  // Elements per tile of record_indirect and of record at max_count; elements_per_tile(count): of record at
  // `count` (plans for more than 2^22 elements of 32-bit keys and values tile counts up to 2^22 in 3072).
  uint64_t elements_per_tile() const;
  uint64_t elements_per_tile(uint64_t count) const;
  KeyedAlgorithm algorithm() const;  // the resolved algorithm (never automatic)
  // Dispatches record() issues for `count`, count 0 included: 1 (chained) or 3 (reduce_then_scan);
  // record_indirect issues one more, which turns the GPU count into dispatch arguments.
  uint32_t dispatch_count(uint64_t count) const;

  // For the k runs of keys[0..count): unique_keys[r] = the key of run r, aggregates[r] = op over run r's
  // values in input order; k is written as a u32 to run_count (0 for count 0). unique_keys and aggregates
  // must hold `count` elements; nothing at or past index k is written.
  Result<void> record(VkCommandBuffer cmd, const ReduceByKeyOperands& operands, uint64_t count) const;
  // count_buffer: usage STORAGE_BUFFER; the ranges must hold max_count elements (see Counts above).
  Result<void> record_indirect(VkCommandBuffer cmd, const ReduceByKeyOperands& operands,
                               const BufferRange& count_buffer) const;

  // Byte offset within scratch of four u32 counters the last record left: {tiles started, fallbacks taken,
  // look-back steps, deepest look-back}; steps and depth stay 0 unless ContextOptions::collect_statistics.
  // reduce_then_scan leaves all four 0.
  VkDeviceSize statistics_offset() const;
  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit ReduceByKey(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
};

}  // namespace vkprim
