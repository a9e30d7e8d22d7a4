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
  uint32_t workgroup_size = 0;
  uint32_t items_per_thread = 0;
  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic;
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
  Result<void> record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& unique_keys,
                      const BufferRange& lengths, const BufferRange& run_count, uint64_t count,
                      const BufferRange& scratch) const;
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& unique_keys,
                               const BufferRange& lengths, const BufferRange& run_count,
                               const BufferRange& count_buffer, const BufferRange& scratch) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit RunLengthEncode(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
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
  Result<void> record(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& offsets,
                      const BufferRange& lengths, const BufferRange& run_count, uint64_t count,
                      const BufferRange& scratch) const;
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& keys, const BufferRange& offsets,
                               const BufferRange& lengths, const BufferRange& run_count,
                               const BufferRange& count_buffer, const BufferRange& scratch) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit NonTrivialRuns(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
};

}  // namespace vkprim
