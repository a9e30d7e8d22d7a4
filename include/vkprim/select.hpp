// vkprim/select.hpp — stream compaction: Select (keep the elements a predicate holds for, in order) and
// Partition (the kept ones in order, then the rejected ones in input order or, as in CUB, reversed).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// flagged: flags[i] != 0 (flags: one u32 per element). Otherwise input[i] <predicate> comparand, IEEE
// for floats: with a NaN on either side only not_equal holds, and -0.0 == +0.0.
enum class SelectPredicate { flagged, less, less_equal, greater, greater_equal, equal, not_equal };
const char* to_string(SelectPredicate predicate);
bool parse(const char* name, SelectPredicate& out);

// The right-hand side of a comparison predicate: its bits and the element type it was made for, by the
// of() overload of that type (of(int32_t) for i32, of(double) for f64, ...). Select and Partition refuse
// (invalid_argument) a comparand made for another type than SelectDesc::type, so of(100.0f) on a u32
// select is an error rather than the bits 0x42C80000. A default Comparand{} (bits 0, untyped) is what the
// flagged predicate takes and compares as 0 of any type.
struct Comparand {
  uint64_t bits = 0;
  DataType type = DataType::u32;  // meaningful where typed
  bool typed = false;
  static Comparand of(uint32_t v) { return {v, DataType::u32, true}; }
  static Comparand of(int32_t v) { return {uint32_t(v), DataType::i32, true}; }
  static Comparand of(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return {b, DataType::f32, true};
  }
  static Comparand of(uint64_t v) { return {v, DataType::u64, true}; }
  static Comparand of(int64_t v) { return {uint64_t(v), DataType::i64, true}; }
  static Comparand of(double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return {b, DataType::f64, true};
  }
};

// What the output holds: the elements themselves, or their positions in the input as u32 indices (an
// engine's "which particles are alive": no index buffer to build, and the flagged predicate then never
// reads the input, which may be BufferRange{}).
enum class SelectOutput { elements, indices };
const char* to_string(SelectOutput output);
bool parse(const char* name, SelectOutput& out);

// chained:  Merrill & Garland 2016 decoupled look-back over the tiles' kept counts with Smith, Levien &
//           Owens (SPAA 2025) decoupled fallback: ONE pass (plus a clear of the tile state) for Select;
//           Partition adds a copy of the rejected elements (see Partition). Needs vulkanMemoryModel +
//           vulkanMemoryModelDeviceScope (device_requirements() lists them). Terminates without forward
//           progress between workgroups.
// count_scan_scatter: portable, no memory model: count per tile, one-workgroup scan of the tile counts,
//           re-read and scatter (reads the input twice).
// automatic = chained where the memory model is enabled, else count_scan_scatter.
enum class SelectAlgorithm { automatic, chained, count_scan_scatter };
const char* to_string(SelectAlgorithm algorithm);
bool parse(const char* name, SelectAlgorithm& out);

// Where Partition puts the rejected elements behind the kept ones:
// input:    in input order (std::stable_partition). The chained pass cannot know where they start until
//           the last tile has counted, so it parks them in scratch and a second pass moves them.
// reversed: in reverse input order, the last rejected element at output[k] and the first at
//           output[count - 1] (CUB's DevicePartition::Flagged / If). Every element is written once, where
//           it belongs, in the single chained pass: the fastest Partition, with no spill in scratch.
// Select has no rejected elements and refuses `reversed`.
enum class RejectedOrder { input, reversed };
const char* to_string(RejectedOrder order);
bool parse(const char* name, RejectedOrder& out);

struct SelectDesc {
  DataType type = DataType::u32;
  uint64_t max_count = 0;    // 1..2^32-1, and the elements must fit one storage-buffer binding (below)
  SelectPredicate predicate = SelectPredicate::flagged;
  SelectAlgorithm algorithm = SelectAlgorithm::automatic;
  SelectOutput output = SelectOutput::elements;  // indices: output holds u32 input positions
  RejectedOrder rejected_order = RejectedOrder::input;  // Partition only
  // Benchmark overrides (types.hpp; 0 = the tuned default). A tile is tuning.workgroup_size (a power of
  // two, 64..1024) x tuning.vectors_per_thread (1..8) vectors of 16 bytes. The tile stays in registers; its elements
  // are written one row per subgroup at a time through shared memory (16 bytes per invocation).
  Tuning tuning{};
};

// The buffers of one Select or Partition record, by name. Every range needs usage STORAGE_BUFFER;
// scratch as scratch_requirements() says.
struct SelectOperands {
  BufferRange input;           // the elements (BufferRange{} for indices of the flagged predicate)
  BufferRange flags;           // one u32 per element, offset a multiple of 4: the flagged predicate only
  BufferRange output;          // `count` elements (u32 indices with SelectOutput::indices)
  BufferRange selected_count;  // one u32, offset a multiple of 4
  BufferRange scratch;
};

namespace detail { struct SelectPlan; }

// A plan: create once (builds every pipeline it needs), record many times, into many command buffers,
// from several threads. Elements are copied as raw bits (NaN payloads and -0.0 survive).
// Limits: max_count <= 2^32-1 (the count is a u32 on the GPU), and max_count elements of the type must fit
// one storage-buffer binding (maxStorageBufferRange; lavapipe 128 MiB = 2^25 u32): larger plans are
// unsupported at create (no windows). Partition's scratch also holds max_count elements under `chained`
// with RejectedOrder::input.
class Select {
 public:
  // invalid_argument: max_count 0 or > 2^32-1, bad tuning override, rejected_order reversed (Partition
  // only). unsupported: 64-bit type without
  // shaderInt64/shaderFloat64, an explicit `chained` without the memory model, max_count past one binding,
  // a tile that needs more shared memory than the device has.
  static Result<Select> create(Context& context, const SelectDesc& desc);
  Select(Select&&) noexcept;
  Select& operator=(Select&&) noexcept;
  ~Select();

  const SelectDesc& desc() const;
  SelectAlgorithm algorithm() const;  // the resolved algorithm (never automatic)
  // Scratch for any count <= max_count: usage STORAGE_BUFFER | TRANSFER_DST (the tile state is cleared
  // with vkCmdFillBuffer) | INDIRECT_BUFFER (record_indirect), alignment >= 16. Never 0.
  ScratchRequirements scratch_requirements() const;
  // Dispatches record() issues for `count` (1 for chained Select, count 0 included; 3 for count_scan_scatter).
  uint32_t dispatch_count(uint64_t count) const;
  // Elements per tile as resolved for the device (workgroup_size x vectors_per_thread x 16 / element size).
  uint64_t elements_per_tile() const;

  // output[0..k) = the input elements the predicate keeps, in input order; k is written as a u32 to
  // selected_count by the GPU (0 for count 0). flags is read only for the flagged predicate and may be
  // BufferRange{} otherwise. comparand: comparison predicates. output must hold `count` elements (k is
  // not known on the CPU); nothing past output[k) is written. Indices of the flagged predicate do not read
  // input (may be BufferRange{}).
  // Not in place: input, flags, output, selected_count and scratch must not overlap (invalid_argument).
  // Before: the caller makes input/flags writes visible to compute-shader reads, and scratch free of
  // hazards including transfer writes. After: output and selected_count are written by compute shaders;
  // the caller adds a barrier (src COMPUTE_SHADER / SHADER_WRITE) before consuming them. Records its own
  // barriers; clobbers the bound compute pipeline, descriptor set 0 and push constants. On error nothing
  // is recorded.
  Result<void> record(VkCommandBuffer cmd, const SelectOperands& operands, uint64_t count,
                      Comparand comparand = {}) const;
  // As record, with the count read on the GPU: a u32 at count_buffer (usage STORAGE_BUFFER, 4-byte
  // aligned), clamped to max_count. input, flags and output must hold max_count elements. count_buffer must
  // be written before (barrier to compute-shader reads); it must not overlap the other ranges.
  Result<void> record_indirect(VkCommandBuffer cmd, const SelectOperands& operands, const BufferRange& count_buffer,
                               Comparand comparand = {}) const;

  // chained only: byte offset within scratch of four u32 counters the last record left:
  // {tiles started, fallbacks taken, look-back steps (summed over tiles), deepest look-back}; steps and
  // depth stay 0 unless ContextOptions::collect_statistics.
  VkDeviceSize statistics_offset() const;
  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit Select(std::unique_ptr<detail::SelectPlan> plan);
  std::unique_ptr<detail::SelectPlan> plan_;
};

// std::stable_partition on the GPU: output[0..k) = the kept elements in input order, output[k..count) the
// rejected ones in input order (RejectedOrder::input) or reversed (RejectedOrder::reversed, as CUB); k
// written to selected_count. Same create/record contract as Select, except that output holds exactly
// `count` elements and all of them are written.
// chained, reversed: one pass writes every element to its place (read n elements (+ flags), write n):
//   the speed of Select's pass; choose it wherever the rejected side's order does not matter.
// chained, input order: the single pass writes the kept elements to output and the rejected ones, in
//   order, to a spill in scratch; a second pass copies the spill to output[k..] once k is known (memory
//   traffic: read n elements (+ flags), write n, then read and write n - k again).
// count_scan_scatter: the scatter writes both sides directly, in either order (reads the input twice,
//   writes it once).
class Partition {
 public:
  static Result<Partition> create(Context& context, const SelectDesc& desc);
  Partition(Partition&&) noexcept;
  Partition& operator=(Partition&&) noexcept;
  ~Partition();

  const SelectDesc& desc() const;
  SelectAlgorithm algorithm() const;
  ScratchRequirements scratch_requirements() const;
  // chained: 1 with RejectedOrder::reversed, else 2 (1 for count 0); 3 for count_scan_scatter.
  uint32_t dispatch_count(uint64_t count) const;
  uint64_t elements_per_tile() const;  // as Select::elements_per_tile()
  Result<void> record(VkCommandBuffer cmd, const SelectOperands& operands, uint64_t count,
                      Comparand comparand = {}) const;
  Result<void> record_indirect(VkCommandBuffer cmd, const SelectOperands& operands, const BufferRange& count_buffer,
                               Comparand comparand = {}) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit Partition(std::unique_ptr<detail::SelectPlan> plan);
  std::unique_ptr<detail::SelectPlan> plan_;
};

}  // namespace vkprim
