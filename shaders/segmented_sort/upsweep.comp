#version 460
// Segmented sort, large segments, phase 1 of a digit pass: one workgroup per tile of the tile list
// (classify.comp) counts the digits of its tile's keys and writes them to its row of the digit table,
// meta[pc.table + tile * 256 + digit]. Tiles start where their segment does, TILE keys apart. Segments of
// one tile are not in the tile list (common/segmented_sort.glsl, SegTile).
// Defines: VKPRIM_KEY64. Specialization: WG_SIZE, ITEMS (TILE = WG_SIZE * ITEMS = pc.large_tile), KEY_FLAGS.
// Dispatched from SEG_ENTRY_TILES. Bindings and push constants: common/segmented_sort.glsl (bit and
// digit_mask: this pass's digit).
#extension GL_GOOGLE_include_directive : require
#define SORT_DIGIT_COUNTS 1
#include "common/segmented_sort.glsl"

void main() {
  const uint t = vk_workgroup_index();
  if (t >= seg_tiles()) return;
  const SegTile tile = seg_tile(t);
  if (!tile.valid) return;
  const uint tid = gl_LocalInvocationIndex;
  for (uint d = tid; d < RADIX_DIGITS; d += WG_SIZE) s_hist[d] = 0u;
  barrier();
  // The padding keys of a segment's last tile count as the largest digit and are taken off.
  const uint padding = sort_count_digits(tile.first, tile.range.y);
  barrier();
  for (uint d = tid; d < RADIX_DIGITS; d += WG_SIZE)
    meta[pc.table + t * RADIX_DIGITS + d] = s_hist[d] - (d == pc.digit_mask ? padding : 0u);
}
