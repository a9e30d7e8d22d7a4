// Embedded SPIR-V, generated at build time from shaders/ (see cmake/VkprimShaders.cmake): one packed group
// per primitive (kShaderGroup_<group> in the generated shader_groups.hpp), referenced only by its users so
// that the linker leaves out the groups a program never uses.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "vkprim/detail/shader_group.hpp"

namespace vkprim::detail {

// nullptr when the group has no such kernel or variant.
const ShaderVariant* find_shader(const ShaderGroup& group, std::string_view kernel, std::string_view variant);
// The SPIR-V words of `shader`, one of `group`'s variants. False on a corrupt stream (a build fault).
bool unpack_shader(const ShaderGroup& group, const ShaderVariant& shader, std::vector<uint32_t>& words);

}  // namespace vkprim::detail
