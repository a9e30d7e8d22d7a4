// Push constants, bindings, segment bounds and scratch lists of the segmented sort (src/segmented_sort.cpp;
// every kernel of shaders/segmented_sort includes this file instead of common/radix.glsl). The radix blocks
// are common/radix.glsl's: bindings 0..5 and the first 12 push-constant words as there, then:
//   set 0 binding 6: begin offsets (u32[]), word shift pc.begin_shift
//   set 0 binding 7: end offsets (u32[]), word shift pc.end_shift
//   binding 4 (meta): the lists, at word offsets of pc (layout below); binding 5: record_indirect's region, or
//   for classify's SEG_ARGS dispatch the dispatch arguments it writes.
// A kernel defines SEG_BLOCK_SORT (the block-wide sort of common/radix_block.glsl), SORT_RANKING,
// SORT_WORKGROUP_SCAN or SORT_DIGIT_COUNTS before including this file, as common/radix.glsl describes.
// Segment s is keys[begin[s] .. end[s]) (SEG_FIXED: [s * segment_size, (s + 1) * segment_size)), both ends
// clamped to pc.bound, so offsets past the keys never reach memory outside them.
#ifndef VKPRIM_SEGMENTED_SORT_GLSL
#define VKPRIM_SEGMENTED_SORT_GLSL

#define SORT_EXTRA_CONSTANTS                                                                                 \
  uint segments;     /* segments of a direct record (SEG_INDIRECT: record_indirect's entry 0) */             \
  uint seg_flags;    /* SEG_* bits */                                                                        \
  uint segment_size; /* SEG_FIXED: keys per segment */                                                       \
  uint bound;        /* keys the offsets may address: every offset is clamped to it */                       \
  uint begin_shift;  /* word shift of binding 6 */                                                           \
  uint end_shift;    /* word shift of binding 7 */                                                           \
  uint small_max;    /* segments of 2..small_max keys are packed into batches, many to a tile */             \
  uint medium_max;   /* ... of up to medium_max keys ranked whole per digit pass; longer ones are large */    \
  uint batch_span;   /* a batch takes the small segments whose weight prefix falls in one span */            \
  uint min_weight;   /* the least weight of a small segment: at most SEG_MAX_SLOTS segments per batch */     \
  uint member_list;  /* word offsets in meta of the member list, */                                          \
  uint batch_list;   /* the batch list (2 words per batch), */                                               \
  uint large_list;   /* the large list (SEG_LARGE_WORDS per entry), */                                       \
  uint owners;       /* the tile owners (one word per tile of a large segment) */                            \
  uint table;        /* and the digit table (256 words per tile) */                                          \
  uint max_large;    /* capacity of the large list */                                                        \
  uint max_tiles;    /* capacity of the tile owners and the digit table */                                   \
  uint large_tile;   /* keys per tile of a large segment (the large kernels' TILE) */                       \
  uint groups_x;     /* maxComputeWorkGroupCount[0]: dispatches spill into y past it */                       \
  uint medium_list;  /* word offset in meta of the medium list (a segment's bounds per entry, 2 pc.segments) */

#if defined(SEG_BLOCK_SORT)
#include "common/radix_block.glsl"
#else
#include "common/radix.glsl"
#endif
#include "common/segment_bounds.glsl"

layout(set = 0, binding = 6, std430) readonly buffer SegmentBegins { uint begin_words[]; };
layout(set = 0, binding = 7, std430) readonly buffer SegmentEnds { uint end_words[]; };

#define SEG_FIXED 1u     // segments of segment_size keys, no offset buffers
#define SEG_INDIRECT 2u  // classify: the segment and workgroup counts are record_indirect's entry 0
#define SEG_ARGS 4u      // classify: one invocation writes the dispatch arguments of the passes after it
#define SEG_COPY 8u      // downsweep: copy each large tile from bindings 0 / 2 to 1 / 3 (odd digit passes)
#define SEG_MEDIUM 16u   // downsweep: one workgroup per entry of the medium list, each segment one tile
#define SEG_CHAINED 32u  // large segments take chained digit passes (histogram.comp, chained.comp)

// Meta layout: header counters (zeroed before classify), then the lists at the pc word offsets. The dispatch
// arguments of the passes after classify (entries of 8 words as common/indirect.glsl's) are a range of scratch
// of their own, bound at binding 5 for classify's SEG_ARGS dispatch only: were they in meta, which every pass
// writes, the barrier after every pass would have to cover indirect-command reads (on the H200 an empty pass
// then took about 4.1 us instead of 2.8).
#define SEG_HEADER_MEMBERS 0u  // entries of the member list (segment indices of batches)
#define SEG_HEADER_BATCHES 1u  // entries of the batch list: {first member, members}
#define SEG_HEADER_LARGE 2u    // entries of the large list: {begin, end, first tile, tiles}
#define SEG_HEADER_TILES 3u    // tiles reserved for large segments
#define SEG_HEADER_MEDIUM 4u   // entries of the medium list (segment indices)
#define SEG_HEADER_SINGLES 5u  // large segments of one tile, listed from the medium list's far end
#define SEG_HEADER_TICKETS 8u  // 8..15: chained.comp's tile ticket of each digit pass
#define SEG_ENTRY_BATCHES 0u   // tile.comp: one workgroup per batch
#define SEG_ENTRY_TILES 1u     // upsweep (histogram): one workgroup per tile of a large segment of several tiles
#define SEG_ENTRY_LARGE 2u     // scan: one workgroup per large segment of several tiles
#define SEG_ENTRY_MEDIUM 3u    // downsweep (SEG_MEDIUM): one workgroup per medium segment
#define SEG_ENTRY_DOWNSWEEP 4u // downsweep (chained): those tiles, then one workgroup per large segment of one tile
#define SEG_ENTRIES 5u
#define SEG_LARGE_WORDS 4u
// Segments per batch: slot numbers are a digit pass's digits, SEG_MAX_SLOTS (the padding key's) excluded.
#define SEG_MAX_SLOTS 255u

bool seg_flag(uint bit) { return (pc.seg_flags & bit) != 0u; }

// [first, last) of segment s in key indices (before the binding shifts), clamped to the bound; an end at or
// before the begin gives an empty range.
uvec2 seg_bounds(uint s) {
  const bool fixed_size = seg_flag(SEG_FIXED);
  const uint begin = fixed_size ? 0u : begin_words[pc.begin_shift + s];
  const uint end = fixed_size ? 0u : end_words[pc.end_shift + s];
  return vk_clamped_segment(fixed_size, s, pc.segment_size, begin, end, pc.bound);
}

// The list counts a pass reads: the header's, clamped to the lists' capacities (overlapping segments, the
// caller's error, may overflow them).
uint seg_batches() { return min(meta[SEG_HEADER_BATCHES], pc.segments); }
uint seg_large_count() { return min(meta[SEG_HEADER_LARGE], pc.max_large); }
uint seg_tiles() { return min(meta[SEG_HEADER_TILES], pc.max_tiles); }
uint seg_medium_count() { return min(meta[SEG_HEADER_MEDIUM], pc.segments); }
uint seg_single_count() { return min(meta[SEG_HEADER_SINGLES], pc.segments); }
// The medium list holds a segment's bounds (seg_bounds: two words) per entry from its start, the one-tile large
// segments' from its end (2 pc.segments words: the two classes together have at most pc.segments entries). The
// bounds rather than the segment index: a workgroup of those passes then starts its key loads one dependent
// load sooner (H200, 4096-key segments: the chained pass ran 4 us slower than under SEG_FIXED).
uint seg_medium_word(uint k) { return pc.medium_list + 2u * k; }
uint seg_single_word(uint k) { return pc.medium_list + 2u * (pc.segments - 1u - k); }
// SEG_CHAINED, after the tile states (the digit table's words, 256 per tile): each tile's digit counts of every
// digit pass (histogram.comp; 256 words per pass), then each large entry's keys of smaller digits per pass
// (scan.comp: the exclusive scan over digits of the counts summed over the entry's tiles).
uint seg_tile_counts_word(uint tile) { return pc.table + (pc.max_tiles + tile * sort_passes()) * RADIX_DIGITS; }
uint seg_prefix_word(uint entry) {
  return pc.table + (pc.max_tiles * (1u + sort_passes()) + entry * sort_passes()) * RADIX_DIGITS;
}
// The keys a batch holds, the block tile (src/segmented_sort.cpp: batch_span = block tile - small_max + 1):
// segments longer than medium_max up to it are sorted whole in a batch of their own.
uint seg_block_max() { return pc.batch_span + pc.small_max - 1u; }

// A tile of a large segment of several tiles: its entry's keys [begin, end), and the tile's first key; valid
// where its owner word names a listed entry whose tiles include it (owner words of a tile no entry claims may
// be stale). A segment of one tile, medium or large, is listed by segment instead (seg_whole_tile): it has no
// upsweep or scan, its downsweep ranks the whole segment, so the tile's digit starts are the segment's.
struct SegTile {
  uvec2 range;
  uint first;
  uint entry;
  uint first_tile;  // the entry's first tile (a segment of one tile: 0)
  bool valid;
  bool alone;  // the segment's only tile: its in-tile digit starts are its offsets, no table row is used
};

SegTile seg_tile(uint t) {
  SegTile r;
  r.entry = meta[pc.owners + t];
  r.valid = r.entry < seg_large_count();
  const uint at = pc.large_list + (r.valid ? r.entry : 0u) * SEG_LARGE_WORDS;
  r.range = uvec2(meta[at], meta[at + 1u]);
  const uint first_tile = meta[at + 2u], tiles = meta[at + 3u];
  r.valid = r.valid && t >= first_tile && t - first_tile < tiles;
  r.first_tile = first_tile;
  r.first = r.range.x + (t - first_tile) * TILE;
  r.alone = false;
  return r;
}

// The segment whose bounds are at meta words `word`, `word` + 1 as its own only tile (a medium segment:
// medium_max keys at most, one TILE of the medium kernel; a large one of one tile: at most TILE).
SegTile seg_whole_tile(uint word) {
  SegTile r;
  r.entry = 0u;
  r.first_tile = 0u;
  r.range = uvec2(meta[word], meta[word + 1u]);
  r.first = r.range.x;
  r.valid = true;
  r.alone = true;
  return r;
}

#if defined(SORT_RANKING)
// SEG_COPY: the tile's keys (and values) from bindings 0 / 2 to 1 / 3 (the copy back after an odd number of
// digit passes).
void seg_copy_tile(SegTile tile) {
  const uint keys = min(TILE, tile.range.y - tile.first);
  for (uint i = gl_LocalInvocationIndex; i < keys; i += WG_SIZE) {
    keys_out[sort_shift(1u) + tile.first + i] = keys_in[sort_shift(0u) + tile.first + i];
#if VKPRIM_VALUE_WORDS > 0
    values_out[sort_shift(3u) + tile.first + i] = values_in[sort_shift(2u) + tile.first + i];
#endif
  }
}
#endif

#endif  // VKPRIM_SEGMENTED_SORT_GLSL
