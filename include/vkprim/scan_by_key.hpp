// vkprim/scan_by_key.hpp — ScanByKey: a scan that restarts at every run of equal adjacent keys (CUB's
// DeviceScan::InclusiveScanByKey / ExclusiveScanByKey). The contract shared by the keyed primitives (runs,
// algorithm, limits, synchronization, errors) is in vkprim/reduce_by_key.hpp.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/result.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

struct ScanByKeyDesc {
  DataType key_type = DataType::u32;
  DataType value_type = DataType::u32;
  Op op = Op::add;
  ScanKind kind = ScanKind::inclusive;  // exclusive: each run starts from the operator's identity
  uint64_t max_count = 0;
  Tuning tuning{};  // workgroup_size and items_per_thread (reduce_by_key.hpp)
  const UserOperator* user_operator = nullptr;  // as in ReduceByKeyDesc (vkprim/reduce_by_key.hpp)
  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic;
};

// The buffers of one ScanByKey record, by name; every range needs usage STORAGE_BUFFER, scratch what
// scratch_requirements() says.
struct ScanByKeyOperands {
  BufferRange keys, values;  // the inputs, `count` elements each
  BufferRange output;        // `count` values
  BufferRange scratch;
};

class ScanByKey {
 public:
  static Result<ScanByKey> create(Context& context, const ScanByKeyDesc& desc);
  ScanByKey(ScanByKey&&) noexcept;
  ScanByKey& operator=(ScanByKey&&) noexcept;
  ~ScanByKey();

  const ScanByKeyDesc& desc() const;
  ScratchRequirements scratch_requirements() const;
  // Elements per tile of record_indirect and of record at max_count; elements_per_tile(count): of record at
  // `count` (plans for more than 2^22 elements of 32-bit keys and values tile counts up to 2^22 in 3072).
  uint64_t elements_per_tile() const;
  uint64_t elements_per_tile(uint64_t count) const;
  KeyedAlgorithm algorithm() const;
  uint32_t dispatch_count(uint64_t count) const;

  // output[i] = op over the values of i's run up to i (inclusive) or before i (exclusive; the identity at
  // a run's first element), for i < count. Not in place: output must not overlap values (a look-back that
  // falls back re-reads other tiles' values).
  Result<void> record(VkCommandBuffer cmd, const ScanByKeyOperands& operands, uint64_t count) const;
  // count_buffer: usage STORAGE_BUFFER; the ranges must hold max_count elements.
  Result<void> record_indirect(VkCommandBuffer cmd, const ScanByKeyOperands& operands,
                               const BufferRange& count_buffer) const;
  VkDeviceSize statistics_offset() const;
  void release_descriptor_sets() const;

 private:
  explicit ScanByKey(std::unique_ptr<detail::ByKeyPlan> plan);
  std::unique_ptr<detail::ByKeyPlan> plan_;
};

}  // namespace vkprim
