// Block-wide radix sort of one tile held by one workgroup (Merrill & Grimshaw, "High Performance and
// Scalable Radix Sorting", 2011: the block-wide sort of CUB's BlockRadixSort): each digit pass ranks the
// tile in shared memory with common/radix.glsl's stable in-tile rank, then stages every key (and payload
// word) at its ranked position and reads it back in striped order, which is the next pass's tile order.
// Shared by sort/single.comp (one tile per sort) and segmented_sort/tile.comp (one tile per segment, or per
// batch of small segments). Include it instead of common/radix.glsl: it sets the pass being ranked
// (SORT_PASS_BIT, SORT_PASS_MASK) and skips the rows of a tile wholly past its count (SORT_RANK_ROWS_BELOW).
#ifndef VKPRIM_RADIX_BLOCK_GLSL
#define VKPRIM_RADIX_BLOCK_GLSL

// The pass being ranked, and the keys of the tile: rows of the tile wholly past them are not ranked.
uint g_pass_bit = 0u;
uint g_pass_mask = 0u;
uint g_count = 0u;
#define SORT_PASS_BIT g_pass_bit
#define SORT_PASS_MASK g_pass_mask
#define SORT_RANK_ROWS_BELOW g_count
#define SORT_RANKING 1
#include "common/radix.glsl"

// Ranks the tile (t_key, striped; the first n slots real, the rest padding keys) on the digit of `mask` at
// `bit`: fills t_pos. Call from uniform control flow; ends with a barrier (s_mem is free for staging).
void sort_block_rank(uint bit, uint mask, uint n) {
  g_pass_bit = bit;
  g_pass_mask = mask;
  g_count = n;
  sort_rank_tile();
}

// Stages word `plane` of item i (a key's or payload's 32-bit word) at its ranked position, for real keys only
// (tile order index below n): padding keys rank after every real key, so positions below n are exactly the
// real keys'. Planes are STAGE_KEYS words apart: a plan stages at most as many planes as it has key or
// payload words (common/radix.glsl, STAGE_WORDS).
void sort_block_stage_word(uint i, uint plane, uint word, uint n) {
  if (sort_striped_index(i) < n) s_mem[plane * STAGE_KEYS + pos_get(i)] = word;
}

uint sort_block_staged_word(uint at, uint plane) { return s_mem[plane * STAGE_KEYS + at]; }

void sort_block_stage_keys(uint n) {
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
#if defined(VKPRIM_KEY64)
    sort_block_stage_word(i, 0u, t_key[i].x, n);
    sort_block_stage_word(i, 1u, t_key[i].y, n);
#else
    sort_block_stage_word(i, 0u, t_key[i], n);
#endif
  }
}

KEY_T sort_block_staged_key(uint at) {
#if defined(VKPRIM_KEY64)
  return uvec2(sort_block_staged_word(at, 0u), sort_block_staged_word(at, 1u));
#else
  return sort_block_staged_word(at, 0u);
#endif
}

// After sort_block_stage_keys and a barrier: t_key in the ranked order, striped (padding keys past n).
void sort_block_reload_keys(uint n) {
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = sort_striped_index(i);
    t_key[i] = index < n ? sort_block_staged_key(index) : SORT_PAD_KEY;
  }
}

#endif  // VKPRIM_RADIX_BLOCK_GLSL
