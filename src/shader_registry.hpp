// Embedded SPIR-V, generated at build time from shaders/ (see cmake/VkprimShaders.cmake).
#pragma once

#include <cstdint>
#include <string_view>

namespace vkprim::detail {

struct ShaderVariant {
  const char* kernel;   // e.g. "reduce/grid_stride"
  const char* variant;  // e.g. "u32.add", "u32.add.nosg", "default"
  const uint32_t* words;
  uint32_t word_count;
};
struct ShaderTable {
  const ShaderVariant* variants;
  uint32_t count;
};
extern const ShaderTable kShaderTables[];
extern const uint32_t kShaderTableCount;

// nullptr when the kernel or variant does not exist.
const ShaderVariant* find_shader(std::string_view kernel, std::string_view variant);

}  // namespace vkprim::detail
