// vkprim/detail/shader_group.hpp — the layout of an embedded shader group: what cmake/embed_spirv.cpp
// generates, for vkprim's own kernels and for the kernels vkprim_add_operator() compiles into an engine.
// Not an API to call: plans look kernels up in it (src/shader_registry.hpp).
#pragma once

#include <cstdint>

namespace vkprim::detail {

struct ShaderVariant {
  const char* kernel;   // e.g. "reduce/grid_stride"
  const char* variant;  // e.g. "u32", "u32.nosg", "default"; a user operator's name
  uint32_t offset;      // first word in the group's unpacked stream
  uint32_t word_count;
};
struct ShaderGroup {
  const uint8_t* packed;  // src/spirv_pack.hpp
  uint32_t packed_bytes;
  uint32_t word_count;    // of the whole unpacked stream
  const ShaderVariant* variants;
  uint32_t count;
};

}  // namespace vkprim::detail
