// vkprim/unique.hpp — Unique: the first element of every run of equal adjacent keys (CUB's
// DeviceSelect::Unique), as keys or as their u32 input positions. The contract shared by the keyed
// primitives (runs, algorithm, limits, synchronization, errors) is in vkprim/reduce_by_key.hpp.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/result.hpp"
#include "vkprim/select.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

struct UniqueDesc {
  DataType key_type = DataType::u32;  // compared as bits
  uint64_t max_count = 0;
  SelectOutput output = SelectOutput::elements;  // indices: u32 positions of the runs' first elements
  Tuning tuning{};  // workgroup_size and items_per_thread (reduce_by_key.hpp)
  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic;
};

// The buffers of one Unique record, by name; every range needs usage STORAGE_BUFFER, scratch what
// scratch_requirements() says.
struct UniqueOperands {
  BufferRange keys;          // the input, `count` keys
  BufferRange output;        // `count` keys (u32 indices with SelectOutput::indices)
  BufferRange unique_count;  // one u32, offset a multiple of 4
  BufferRange scratch;
};

class Unique {
 public:
  static Result<Unique> create(Context& context, const UniqueDesc& desc);
  Unique(Unique&&) noexcept;
  Unique& operator=(Unique&&) noexcept;
  ~Unique();

  const UniqueDesc& desc() const;
  ScratchRequirements scratch_requirements() const;
  // Elements per tile of record_indirect and of record at max_count; elements_per_tile(count): of record at
  // `count` (plans for more than 2^22 elements of 32-bit keys and values tile counts up to 2^22 in 3072).
  uint64_t elements_per_tile() const;
  uint64_t elements_per_tile(uint64_t count) const;
  KeyedAlgorithm algorithm() const;
  uint32_t dispatch_count(uint64_t count) const;

  // output[r] = the first key of run r (or its index), for the k runs of keys[0..count); k to unique_count.
  // output must hold `count` elements; nothing at or past k is written.
  Result<void> record(VkCommandBuffer cmd, const UniqueOperands& operands, uint64_t count) const;
  // count_buffer: usage STORAGE_BUFFER; the ranges must hold max_count elements.
  Result<void> record_indirect(VkCommandBuffer cmd, const UniqueOperands& operands,
                               const BufferRange& count_buffer) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit Unique(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
};

}  // namespace vkprim
