#version 460
// Segmented sort, large segments, phase 3 of a digit pass: one workgroup per tile of the tile list ranks its
// tile stably by digit (common/radix.glsl: the in-tile rank and staged scatter of reduce_then_scan's
// downsweep) and scatters it within its segment: the digit's offset in the segment from the scanned table
// (scan.comp), or for a segment's only tile the tile's own digit start, plus the key's position among the
// tile's keys of that digit. A tile whose digit runs would leave
// its segment (only where segments overlap, the caller's error) writes nothing. SEG_COPY: copies each tile's
// keys (and values) instead (the copy back after an odd number of digit passes). SEG_MEDIUM: the same for
// medium segments, a workgroup each (the medium list, dispatched from SEG_ENTRY_MEDIUM), each its own only
// tile: ranked whole per digit pass (H200, segments of 1024 keys in 1024-key tiles: 519 us for 2^24 keys
// against 975 in the batch kernel's shared-memory sort, and 1422 in 4096-key large tiles).
// Defines: VKPRIM_KEY64, VKPRIM_VALUE_WORDS (0, 1 or 2), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (>= 256), ITEMS, SUBGROUP_MIN, KEY_FLAGS. Dispatched from SEG_ENTRY_DOWNSWEEP: the
// tiles of the large segments of several tiles, then the large segments of one tile (or SEG_ENTRY_MEDIUM).
// Bindings and push constants: common/segmented_sort.glsl (bit and digit_mask: this pass's digit).
#extension GL_GOOGLE_include_directive : require
#define SORT_RANKING 1
#include "common/segmented_sort.glsl"

shared uint s_outside;

void main() {
  const uint t = vk_workgroup_index();
  const bool medium = seg_flag(SEG_MEDIUM);
  const uint tiles = medium ? 0u : seg_tiles();
  if (t >= (medium ? seg_medium_count() : tiles + seg_single_count())) return;
  const SegTile tile = medium ? seg_whole_tile(seg_medium_word(t)) : t < tiles ? seg_tile(t) : seg_whole_tile(seg_single_word(t - tiles));
  if (!tile.valid) return;
  if (seg_flag(SEG_COPY)) {
    seg_copy_tile(tile);
    return;
  }
  const uint tid = gl_LocalInvocationIndex;
  if (tid == 0u) s_outside = 0u;
  sort_load_ordered(tile.first, sort_striped_index(0u), RADIX_SG_SIZE, tile.range.y, t_key);
  sort_rank_tile();  // barriers: s_outside is written, s_count and s_start are the tile's
  sort_stage_keys();
  if (tid < RADIX_DIGITS) {
    const uint len = tile.range.y - tile.range.x;
    const uint offset = tile.alone ? s_start[tid] : meta[pc.table + t * RADIX_DIGITS + tid];
    const uint padding = tid == pc.digit_mask ? sort_range_padding(tile.first, tile.range.y) : 0u;
    const uint keys = s_count[tid] - padding;
    // A segment's only tile ranks within it (and its digits past digit_mask start past its keys: unchecked).
    if (!tile.alone && (offset > len || keys > len - offset)) s_outside = 1u;
    s_base[tid] = tile.range.x + offset - s_start[tid];
  }
  barrier();
  if (s_outside != 0u) return;
  sort_scatter_range(tile.first, tile.range.y);
}
