#include "shader_registry.hpp"

#include "spirv_pack.hpp"

namespace vkprim::detail {

const ShaderVariant* find_shader(const ShaderGroup& group, std::string_view kernel, std::string_view variant) {
  for (uint32_t v = 0; v < group.count; ++v)
    if (kernel == group.variants[v].kernel && variant == group.variants[v].variant) return &group.variants[v];
  return nullptr;
}

// A variant's matches reach back into the variants before it, so the stream is unpacked from its start up
// to the variant's end, in place, and the variants before it are dropped.
bool unpack_shader(const ShaderGroup& group, const ShaderVariant& shader, std::vector<uint32_t>& words) {
  const size_t end = size_t(shader.offset) + shader.word_count;
  if (end > group.word_count) return false;
  words.resize(end);
  if (!spirv_pack::unpack(group.packed, group.packed_bytes, words.data(), end)) return false;
  words.erase(words.begin(), words.begin() + shader.offset);
  return true;
}

}  // namespace vkprim::detail
