// Embedded SPIR-V, generated at build time from shaders/ (see cmake/VkprimShaders.cmake): one packed group
// per primitive (kShaderGroup_<group> in the generated shader_groups.hpp), referenced only by its users so
// that the linker leaves out the groups a program never uses.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace vkprim::detail {

struct ShaderVariant {
  const char* kernel;   // e.g. "reduce/grid_stride"
  const char* variant;  // e.g. "u32", "u32.nosg", "default"
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

// nullptr when the group has no such kernel or variant.
const ShaderVariant* find_shader(const ShaderGroup& group, std::string_view kernel, std::string_view variant);
// The SPIR-V words of `shader`, one of `group`'s variants. False on a corrupt stream (a build fault).
bool unpack_shader(const ShaderGroup& group, const ShaderVariant& shader, std::vector<uint32_t>& words);

}  // namespace vkprim::detail
