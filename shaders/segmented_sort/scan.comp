#version 460
// Segmented sort, large segments, phase 2 of a digit pass: one workgroup per entry of the large list;
// invocation d scans digit d's counts over the segment's tiles in tile order, and the digit totals are
// scanned across digits, so that each table entry becomes the offset within its segment of the tile's first
// key of that digit: keys of smaller digits in the segment, then of the same digit in earlier tiles.
// Defines: VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (256: one invocation per digit).
// SEG_CHAINED: once per record, each segment's keys of smaller digits for every digit pass instead.
// Dispatched from SEG_ENTRY_LARGE. Bindings and push constants: common/segmented_sort.glsl.
#extension GL_GOOGLE_include_directive : require
#define SORT_WORKGROUP_SCAN 1
#include "common/segmented_sort.glsl"

// Tiles per trip of the loops: their loads issue together, so a segment of T tiles waits on memory about
// 2 T / SEG_SCAN_BATCH times instead of 2 T (a 10^6-key segment: 245 tiles of 4096 keys).
#define SEG_SCAN_BATCH 16u

// SEG_CHAINED: invocation d sums digit d's counts of every digit pass over the entry's tiles (histogram.comp)
// and stores, per pass, the keys of smaller digits in the segment (seg_prefix_word), where chained.comp's
// first tile of the segment starts.
void seg_chain_prefixes(uint entry) {
  const uint d = gl_LocalInvocationIndex, passes = sort_passes();
  const uint at = pc.large_list + entry * SEG_LARGE_WORDS;
  const uint first_tile = meta[at + 2u], tiles = meta[at + 3u];
  for (uint p = 0u; p < passes; ++p) {
    uint running = 0u;
    for (uint k = 0u; k < tiles; k += SEG_SCAN_BATCH) {
      uint x[SEG_SCAN_BATCH];
      [[unroll]] for (uint j = 0u; j < SEG_SCAN_BATCH; ++j)
        x[j] = k + j < tiles ? meta[seg_tile_counts_word(first_tile + k + j) + p * RADIX_DIGITS + d] : 0u;
      [[unroll]] for (uint j = 0u; j < SEG_SCAN_BATCH; ++j) running += x[j];
    }
    uint total;
    const uint smaller = sort_workgroup_scan(running, total);
    meta[seg_prefix_word(entry) + p * RADIX_DIGITS + d] = smaller;
  }
}

void main() {
  const uint entry = vk_workgroup_index();
  if (entry >= seg_large_count()) return;
  if (seg_flag(SEG_CHAINED)) {
    seg_chain_prefixes(entry);
    return;
  }
  const uint d = gl_LocalInvocationIndex;
  const uint at = pc.large_list + entry * SEG_LARGE_WORDS;
  const uint first_row = pc.table + meta[at + 2u] * RADIX_DIGITS + d, tiles = meta[at + 3u];
  uint running = 0u;
  for (uint k = 0u; k < tiles; k += SEG_SCAN_BATCH) {
    uint x[SEG_SCAN_BATCH];
    [[unroll]] for (uint j = 0u; j < SEG_SCAN_BATCH; ++j)
      x[j] = k + j < tiles ? meta[first_row + (k + j) * RADIX_DIGITS] : 0u;
    [[unroll]] for (uint j = 0u; j < SEG_SCAN_BATCH; ++j) {
      if (k + j < tiles) meta[first_row + (k + j) * RADIX_DIGITS] = running;
      running += x[j];
    }
  }
  uint total;
  const uint smaller = sort_workgroup_scan(running, total);
  for (uint k = 0u; k < tiles; k += SEG_SCAN_BATCH) {
    uint x[SEG_SCAN_BATCH];
    [[unroll]] for (uint j = 0u; j < SEG_SCAN_BATCH; ++j)
      x[j] = k + j < tiles ? meta[first_row + (k + j) * RADIX_DIGITS] : 0u;
    [[unroll]] for (uint j = 0u; j < SEG_SCAN_BATCH; ++j)
      if (k + j < tiles) meta[first_row + (k + j) * RADIX_DIGITS] = x[j] + smaller;
  }
}
