#version 460
// Segmented sort, chained large segments (SEG_CHAINED), before the digit passes: one workgroup per tile of the
// tile list counts every digit pass's digits of its tile's keys in shared memory and stores them
// (seg_tile_counts_word; scan.comp then sums them per segment, for each digit pass's first tile of a segment:
// chained.comp). It also marks its tile's states not written (common/radix_look_back.glsl:
// SORT_STATE_UNWRITTEN, as pass 0 reads them). One read of the large segments' keys in all, where
// reduce_then_scan's upsweep reads them once per digit pass (Adinets & Merrill's upfront histogram, per
// segment). Plain stores, not atomics into a histogram per segment: those, and zeroing them in classify, cost
// 43 + 50 us at 2^24 keys in segments of 65536 (H200).
// Defines: VKPRIM_KEY64. Specialization: WG_SIZE, ITEMS (TILE = pc.large_tile), KEY_FLAGS. Dispatched from
// SEG_ENTRY_TILES. Bindings and push constants: common/segmented_sort.glsl (bit: begin_bit).
#extension GL_GOOGLE_include_directive : require
#include "common/segmented_sort.glsl"

shared uint s_counts[8u * RADIX_DIGITS];  // the digit counts of up to 8 digit passes (64-bit keys)

void main() {
  const uint t = vk_workgroup_index();
  if (t >= seg_tiles()) return;
  const SegTile tile = seg_tile(t);
  if (!tile.valid) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint passes = sort_passes(), words = passes * RADIX_DIGITS;
  for (uint w = tid; w < words; w += WG_SIZE) s_counts[w] = 0u;
  for (uint d = tid; d < RADIX_DIGITS; d += WG_SIZE) meta[pc.table + t * RADIX_DIGITS + d] = SORT_STATE_UNWRITTEN;
  barrier();
  KEY_T keys[ITEMS];
  sort_load_ordered(tile.first, tid, WG_SIZE, tile.range.y, keys);  // every load before any atomic
  const uint valid = min(TILE, tile.range.y - tile.first);
  for (uint p = 0u; p < passes; ++p) {
    const uint bit = pc.bit + 8u * p;
    const uint mask = sort_digit_mask(bit);
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
      if (tid + k * WG_SIZE < valid) atomicAdd(s_counts[p * RADIX_DIGITS + sort_digit(keys[k], bit, mask)], 1u);
  }
  barrier();
  const uint base = seg_tile_counts_word(t);
  for (uint w = tid; w < words; w += WG_SIZE) meta[base + w] = s_counts[w];
}
