#version 460
// Portable stream compaction, pass 2 of 3: one workgroup replaces the n = tiles counts in binding 2 by
// their inclusive prefix sums, WG_SIZE x 4 counts per step (coalesced), carrying the running total.
// Defines: VKPRIM_TYPE_U32 (only for the shared headers), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (power of two). Bindings and push: common/select_io.glsl (count = tiles).
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/select_io.glsl"
#include "common/workgroup_count_scan.glsl"

void main() {
  const uint n = vk_select_count();
  if (vk_workgroup_index() != 0u) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint chunk = WG_SIZE * 4u;
  uint carry = 0u;
  for (uint base = 0u; base < n; base += chunk) {
    uvec4 x = uvec4(0u);
    [[unroll]] for (uint c = 0u; c < 4u; ++c) {
      const uint i = base + c * WG_SIZE + tid;
      x[c] = i < n ? scratch_words[i] : 0u;
    }
    // Row c of the chunk is counts base + c * WG_SIZE ..: one workgroup scan of the four rows at once.
    uvec4 total;
    const uvec4 before = vk_workgroup_exclusive_scan(x, total);
    uint row_base = carry;
    [[unroll]] for (uint c = 0u; c < 4u; ++c) {
      const uint i = base + c * WG_SIZE + tid;
      if (i < n) scratch_words[i] = row_base + before[c] + x[c];
      row_base += total[c];
    }
    carry = row_base;
  }
}
