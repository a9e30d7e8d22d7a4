#version 460
// Copies the sorted keys (and values) from the scratch ping-pong buffer back to the caller's buffers
// when the number of digit passes is odd. Grid-stride over TILE = WG_SIZE * ITEMS keys per workgroup.
// Defines: VKPRIM_KEY64, VKPRIM_KEY8, VKPRIM_KEY16, VKPRIM_VALUE_WORDS, VKPRIM_VALUE_UNIT. Specialization:
// WG_SIZE, ITEMS, VALUE_UNITS.
// Bindings/push: common/radix.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/radix.glsl"

void main() {
  const uint n = sort_count();
  const uint groups = sort_groups();
  const uint group = vk_workgroup_index();
  if (group >= groups) return;
  for (uint i = group * WG_SIZE + gl_LocalInvocationIndex; i < n; i += groups * WG_SIZE) {
    keys_out[sort_shift(1u) + i] = keys_in[sort_shift(0u) + i];
#if defined(SORT_WIDE_VALUES)
    for (uint u = 0u; u < VALUE_UNITS; ++u)
      values_out[(sort_shift(3u) + i) * VALUE_UNITS + u] = values_in[(sort_shift(2u) + i) * VALUE_UNITS + u];
#elif VKPRIM_VALUE_WORDS > 0
    values_out[sort_shift(3u) + i] = values_in[sort_shift(2u) + i];
#endif
  }
}
