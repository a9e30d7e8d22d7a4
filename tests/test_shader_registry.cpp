// The embedded SPIR-V (src/shader_registry.hpp, src/spirv_pack.hpp): every packed variant unpacks to a
// SPIR-V module, lookups miss cleanly, and a damaged stream is refused without reading past its end.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "shader_groups.hpp"
#include "spirv_pack.hpp"

using namespace vkprim::detail;

namespace {

const ShaderGroup* const kGroups[] = {&kShaderGroup_reduce,   &kShaderGroup_scan,    &kShaderGroup_select,
                                      &kShaderGroup_sort,     &kShaderGroup_by_key,  &kShaderGroup_indirect,
                                      &kShaderGroup_ceiling,  &kShaderGroup_test};
constexpr uint32_t kSpirvMagic = 0x07230203u;

}  // namespace

TEST_CASE("every embedded variant unpacks to a SPIR-V module of its recorded length", "[registry]") {
  for (const ShaderGroup* group : kGroups) {
    REQUIRE(group->count > 0);
    uint32_t next = 0;
    for (uint32_t v = 0; v < group->count; ++v) {
      const ShaderVariant& shader = group->variants[v];
      INFO(shader.kernel << " [" << shader.variant << "]");
      CHECK(shader.offset == next);  // variants follow each other in the stream
      next = shader.offset + shader.word_count;
      std::vector<uint32_t> words;
      REQUIRE(unpack_shader(*group, shader, words));
      REQUIRE(words.size() == shader.word_count);
      CHECK(words[0] == kSpirvMagic);
      CHECK(find_shader(*group, shader.kernel, shader.variant) == &shader);
    }
    CHECK(next == group->word_count);
  }
}

TEST_CASE("a kernel or variant that is not embedded is not found", "[registry]") {
  CHECK(find_shader(kShaderGroup_reduce, "reduce/grid_stride", "u32") != nullptr);
  CHECK(find_shader(kShaderGroup_reduce, "reduce/grid_stride", "u128") == nullptr);
  CHECK(find_shader(kShaderGroup_reduce, "scan/chained_lookback", "u32") == nullptr);  // another group's
  CHECK(find_shader(kShaderGroup_sort, "", "") == nullptr);
}

TEST_CASE("a truncated or corrupted packed stream is refused, never read past its end", "[registry]") {
  const ShaderGroup& group = kShaderGroup_indirect;
  std::vector<uint32_t> whole(group.word_count);
  REQUIRE(spirv_pack::unpack(group.packed, group.packed_bytes, whole.data(), whole.size()));

  // Truncated: the bytes copied to a buffer of exactly that size, so a read past the end is a sanitizer
  // error (the asan build runs this file too).
  for (uint32_t keep : {0u, 1u, group.packed_bytes / 2, group.packed_bytes - 1}) {
    INFO("bytes kept: " << keep);
    std::vector<uint8_t> truncated(group.packed, group.packed + keep);
    std::vector<uint32_t> out(group.word_count);
    CHECK_FALSE(spirv_pack::unpack(truncated.data(), truncated.size(), out.data(), out.size()));
  }

  // Random corruption either fails or yields some words; it must never crash or write past `out`.
  std::mt19937 rng(Catch::rngSeed());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> bytes(group.packed, group.packed + group.packed_bytes);
    bytes[rng() % bytes.size()] ^= uint8_t(1u << (rng() % 8));
    std::vector<uint32_t> out(group.word_count);
    (void)spirv_pack::unpack(bytes.data(), bytes.size(), out.data(), out.size());
  }

  // A match that reaches before the stream's start is refused: token (1 literal, match 2), the literal,
  // then a distance of 5.
  const uint8_t before_start[] = {0x10, 0x07, 0x05};
  std::vector<uint32_t> out(3);
  CHECK_FALSE(spirv_pack::unpack(before_start, sizeof(before_start), out.data(), out.size()));
  // The same with a distance of 1 repeats the literal.
  const uint8_t repeat[] = {0x10, 0x07, 0x01};
  REQUIRE(spirv_pack::unpack(repeat, sizeof(repeat), out.data(), out.size()));
  CHECK(out == std::vector<uint32_t>{7, 7, 7});
}
