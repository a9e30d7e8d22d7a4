// vkprim/types.hpp — value types, operators, buffer ranges and scratch requirements shared by all plans.
#pragma once

#include <cstdint>

#include <vulkan/vulkan_core.h>

namespace vkprim {

// 64-bit types need shaderInt64 / shaderFloat64 on the device (Capabilities says which).
// u8 and u16 are RadixSort key types only: every other plan refuses them with invalid_argument. Their
// keys are read and written as bytes and halves, which needs storageBuffer8BitAccess /
// storageBuffer16BitAccess (feature_storage_8bit / feature_storage_16bit).
enum class DataType { u32, i32, f32, u64, i64, f64, u8, u16 };
// Bitwise operators are defined for integer types only.
enum class Op { add, min, max, bit_and, bit_or, bit_xor };

const char* to_string(DataType type);
const char* to_string(Op op);
uint32_t size_of(DataType type);        // bytes per element: 1, 2, 4 or 8
bool is_integer(DataType type);
bool is_64bit(DataType type);

// A byte range of a caller-owned buffer: `size` bytes from `offset`. The size is always explicit: a plan
// binds and writes only within it, and refuses (invalid_argument, nothing recorded) a range smaller than
// the call needs, including size 0 (the default) and VK_WHOLE_SIZE, whose extent vkprim cannot see.
// Device's Buffer::range() resolves VK_WHOLE_SIZE against the buffer it owns. offset must be a multiple of
// the element size of what the range holds.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

// Scratch a plan needs for its max_count: a caller-owned buffer range of at least `size` bytes, offset
// aligned to `alignment`, created with `usage`. size may be 0 (then any range, even a null one, works).
// One scratch range may serve many records, in one command buffer or several, if they never run at the
// same time: between two records that share it the caller places a barrier from compute-shader reads and
// writes to compute-shader reads and writes and transfer writes (plans may clear scratch with
// vkCmdFillBuffer first).
struct ScratchRequirements {
  VkDeviceSize size = 0;
  VkDeviceSize alignment = 1;
  VkBufferUsageFlags usage = 0;
};

// Overrides of a plan's tuned shape, for benchmarking; 0 keeps the tuned default. Every description has
// one `tuning` member; its header says which fields that plan reads and their ranges. A field the plan
// does not read must stay 0 (invalid_argument at create), so an override is never silently ignored.
struct Tuning {
  uint32_t workgroup_size = 0;      // invocations per workgroup
  uint32_t items_per_thread = 0;    // elements (keys) per invocation: RadixSort and the keyed plans
  uint32_t vectors_per_thread = 0;  // 16-byte vectors per invocation: Reduce, Scan, Select, Partition
  uint32_t max_workgroups = 0;      // Reduce's grid_stride: workgroups in the grid
  uint32_t lookback_windows = 0;    // chained Scan: subgroup-wide windows per look-back step
};

}  // namespace vkprim
