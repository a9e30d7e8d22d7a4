#version 460
// reduce_then_scan, phase 1 of a digit pass: workgroup g counts the digits of its contiguous run of tiles
// (shared-memory atomics) and writes them, digit-major, to the digit table:
// meta[META_REGION + 256 + digit * G + g], G = the workgroups of the pass.
// Defines: VKPRIM_KEY64, VKPRIM_KEY8, VKPRIM_KEY16. Specialization: WG_SIZE, ITEMS (keys per invocation per
// tile), KEY_FLAGS.
// Bindings/push: common/radix.glsl (bit = this pass's first bit).
#extension GL_GOOGLE_include_directive : require
#define SORT_DIGIT_COUNTS 1
#include "common/radix.glsl"

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = sort_count();
  const uint tiles = sort_tiles(n);
  const uint groups = sort_groups();
  const uint group = vk_workgroup_index();
  if (group >= groups) return;
  const uint per_group = tiles / groups + (tiles % groups != 0u ? 1u : 0u);
  const uint first_tile = min(group * per_group, tiles);
  const uint end_tile = min(first_tile + per_group, tiles);
  for (uint w = tid; w < RADIX_DIGITS; w += WG_SIZE) s_hist[w] = 0u;
  barrier();
  // The padding keys of a last tile count as the largest digit and are taken off at the end.
  uint padding = 0u;
  for (uint tile = first_tile; tile < end_tile; ++tile) padding += sort_count_digits(tile * TILE, n);
  barrier();
  for (uint d = tid; d < RADIX_DIGITS; d += WG_SIZE)
    meta[META_REGION + RADIX_DIGITS + d * groups + group] = s_hist[d] - (d == pc.digit_mask ? padding : 0u);
}
