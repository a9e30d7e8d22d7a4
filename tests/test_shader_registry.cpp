// The embedded SPIR-V (src/shader_registry.hpp, src/spirv_pack.hpp): every packed variant unpacks to a
// SPIR-V module, lookups miss cleanly, a damaged stream is refused without reading past its end, and the
// generated kernel list (kernel_names.hpp, looked up through src/kernel.hpp) says what the modules declare.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernel.hpp"
#include "shader_groups.hpp"
#include "spirv_pack.hpp"

using namespace vkprim::detail;

namespace {

struct NamedGroup {
  std::string_view name;
  const ShaderGroup* group;
};
const NamedGroup kNamedGroups[] = {{"reduce", &kShaderGroup_reduce},     {"scan", &kShaderGroup_scan},
                                   {"select", &kShaderGroup_select},     {"sort", &kShaderGroup_sort},
                                   {"by_key", &kShaderGroup_by_key},     {"indirect", &kShaderGroup_indirect},
                                   {"ceiling", &kShaderGroup_ceiling},   {"test", &kShaderGroup_test},
                                   {"histogram", &kShaderGroup_histogram},
                                   {"segmented_reduce", &kShaderGroup_segmented_reduce},
                                   {"topk", &kShaderGroup_topk},
                                   {"segmented_sort", &kShaderGroup_segmented_sort}};
constexpr uint32_t kSpirvMagic = 0x07230203u;

const ShaderGroup* group_named(std::string_view name) {
  for (const NamedGroup& g : kNamedGroups)
    if (g.name == name) return g.group;
  return nullptr;
}

// What a module declares: its specialization constants (bits by SpecId) and one past its highest binding.
struct Declared {
  uint32_t constants = 0, bindings = 0;
};

Declared declared(const std::vector<uint32_t>& words) {
  constexpr uint32_t kOpDecorate = 71, kSpecId = 1, kBinding = 33;
  Declared d;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffffu;
    if (count == 0) break;
    if (opcode == kOpDecorate && count >= 4 && words[i + 2] == kSpecId) d.constants |= 1u << words[i + 3];
    if (opcode == kOpDecorate && count >= 4 && words[i + 2] == kBinding)
      d.bindings = std::max(d.bindings, words[i + 3] + 1);
    i += count;
  }
  return d;
}

}  // namespace

TEST_CASE("every embedded variant unpacks to a SPIR-V module of its recorded length", "[registry]") {
  for (const NamedGroup& named : kNamedGroups) {
    const ShaderGroup* group = named.group;
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

TEST_CASE("every embedded kernel is listed in kernel_names.hpp, in its group", "[registry]") {
  for (const NamedGroup& g : kNamedGroups) {
    for (uint32_t v = 0; v < g.group->count; ++v) {
      const ShaderVariant& shader = g.group->variants[v];
      INFO(shader.kernel << " [" << shader.variant << "]");
      const std::optional<KernelName> listed = KernelName::find(shader.kernel);
      REQUIRE(listed.has_value());
      CHECK(listed->info().group == g.name);
      CHECK(listed->info().embedded);
    }
  }
}

TEST_CASE("a listed kernel is embedded exactly where the list says so", "[registry]") {
  for (const KernelInfo& k : kKernelList) {
    INFO(k.name);
    const ShaderGroup* group = group_named(k.group);
    REQUIRE(group != nullptr);
    uint32_t variants = 0;
    for (uint32_t v = 0; v < group->count; ++v) variants += std::string_view(group->variants[v].kernel) == k.name;
    CHECK((variants > 0) == k.embedded);
  }
}

TEST_CASE("every kernel declares the specialization constants and bindings the list gives it", "[registry]") {
  for (const KernelInfo& k : kKernelList) {
    if (!k.embedded) continue;
    const ShaderGroup& group = *group_named(k.group);
    Declared all;
    for (uint32_t v = 0; v < group.count; ++v) {
      const ShaderVariant& shader = group.variants[v];
      if (std::string_view(shader.kernel) != k.name) continue;
      INFO(shader.kernel << " [" << shader.variant << "]");
      std::vector<uint32_t> words;
      REQUIRE(unpack_shader(group, shader, words));
      const Declared d = declared(words);
      CHECK((d.constants & ~k.constants) == 0);  // a constant_id the list (SpecId) does not give the kernel
      CHECK(d.bindings <= k.bindings);
      all.constants |= d.constants;
      all.bindings = std::max(all.bindings, d.bindings);
    }
    INFO(k.name);
    CHECK(all.constants == k.constants);
    CHECK(all.bindings == k.bindings);
  }
}
