// vkprim/run_length_encode.hpp — run-length encoding of runs of equal adjacent keys (CUB's
// DeviceRunLengthEncode::Encode and NonTrivialRuns). The contract shared by the keyed primitives (runs,
// algorithm, limits, synchronization, errors) is in vkprim/reduce_by_key.hpp. Lengths and offsets are u32.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

struct RunLengthEncodeDesc {
  DataType key_type = DataType::u32;  // compared as bits
  uint64_t max_count = 0;
  Tuning tuning{};  // workgroup_size and items_per_thread (reduce_by_key.hpp)
  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic;
};

// The buffers of one RunLengthEncode record, by name; every range needs usage STORAGE_BUFFER, scratch what
// scratch_requirements() says.
struct RunLengthEncodeOperands {
  BufferRange keys;         // the input, `count` keys
  BufferRange unique_keys;  // `count` keys
  BufferRange lengths;      // `count` u32
  BufferRange run_count;    // one u32, offset a multiple of 4
  BufferRange scratch;
};

class RunLengthEncode {
 public:
  static Result<RunLengthEncode> create(Context& context, const RunLengthEncodeDesc& desc);
  RunLengthEncode(RunLengthEncode&&) noexcept;
  RunLengthEncode& operator=(RunLengthEncode&&) noexcept;
  ~RunLengthEncode();

  const RunLengthEncodeDesc& desc() const;
  ScratchRequirements scratch_requirements() const;
  // Elements per tile of record_indirect and of record at max_count; elements_per_tile(count): of record at
  // `count` (plans for more than 2^22 elements of 32-bit keys and values tile counts up to 2^22 in 3072).
  uint64_t elements_per_tile() const;
  uint64_t elements_per_tile(uint64_t count) const;
  KeyedAlgorithm algorithm() const;
  uint32_t dispatch_count(uint64_t count) const;

  // For the k runs of keys[0..count): unique_keys[r] = run r's key, lengths[r] = its length (u32); k to
  // run_count. unique_keys and lengths must hold `count` elements; nothing at or past k is written.
  Result<void> record(VkCommandBuffer cmd, const RunLengthEncodeOperands& operands, uint64_t count) const;
  // count_buffer: usage STORAGE_BUFFER; the ranges must hold max_count elements.
  Result<void> record_indirect(VkCommandBuffer cmd, const RunLengthEncodeOperands& operands,
                               const BufferRange& count_buffer) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit RunLengthEncode(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
};

// The buffers of one NonTrivialRuns record, by name; every range needs usage STORAGE_BUFFER, scratch what
// scratch_requirements() says.
struct NonTrivialRunsOperands {
  BufferRange keys;       // the input, `count` keys
  BufferRange offsets;    // count / 2 u32
  BufferRange lengths;    // count / 2 u32
  BufferRange run_count;  // one u32, offset a multiple of 4
  BufferRange scratch;
};

// The runs longer than one element: their offsets and lengths.
class NonTrivialRuns {
 public:
  static Result<NonTrivialRuns> create(Context& context, const RunLengthEncodeDesc& desc);
  NonTrivialRuns(NonTrivialRuns&&) noexcept;
  NonTrivialRuns& operator=(NonTrivialRuns&&) noexcept;
  ~NonTrivialRuns();

  const RunLengthEncodeDesc& desc() const;
  ScratchRequirements scratch_requirements() const;
  // Elements per tile of record_indirect and of record at max_count; elements_per_tile(count): of record at
  // `count` (plans for more than 2^22 elements of 32-bit keys and values tile counts up to 2^22 in 3072).
  uint64_t elements_per_tile() const;
  uint64_t elements_per_tile(uint64_t count) const;
  KeyedAlgorithm algorithm() const;
  uint32_t dispatch_count(uint64_t count) const;

  // For the k runs of keys[0..count) longer than one element, in input order: offsets[r] = the index of
  // run r's first element, lengths[r] = its length (both u32); k to run_count. offsets and lengths must hold
  // count / 2 elements (at most that many runs have two or more elements); nothing at or past k is written.
  Result<void> record(VkCommandBuffer cmd, const NonTrivialRunsOperands& operands, uint64_t count) const;
  // count_buffer: usage STORAGE_BUFFER; keys must hold max_count keys, offsets and lengths max_count / 2.
  Result<void> record_indirect(VkCommandBuffer cmd, const NonTrivialRunsOperands& operands,
                               const BufferRange& count_buffer) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit NonTrivialRuns(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
};

}  // namespace vkprim
