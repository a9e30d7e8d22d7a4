// Tile layer of stream compaction. A tile is WG_SIZE x ITEMS 16-byte vectors (VEC_N elements each); row k
// is vectors k * WG_SIZE .. k * WG_SIZE + WG_SIZE - 1 and invocation tid owns vector k * WG_SIZE + tid of
// every row, so loads are coalesced. Each invocation keeps a bit mask of its kept elements (bit
// k * VEC_N + c; ITEMS * VEC_N <= 32). One workgroup exclusive scan of the per-row counts, packed in
// 16-bit fields (two rows per uvec4 component; a row holds at most 4 * 1024 elements), gives every kept
// element its rank within the tile in input order. The kept elements are then staged in shared memory at
// their rank (Partition: the rejected ones after them, at their own rank) and written out by consecutive
// invocations to consecutive addresses (coalesced), whatever the output's alignment.
// Requires common/config.glsl, common/select_io.glsl, common/workgroup_count_scan.glsl.
#ifndef VKPRIM_SELECT_TILE_GLSL
#define VKPRIM_SELECT_TILE_GLSL

#define TILE_VECTORS (WG_SIZE * ITEMS)
#define TILE_ELEMENTS (TILE_VECTORS * VEC_N)
#define VECTOR_MASK ((1u << VEC_N) - 1u)

// Tiles of n elements (at least one, so a count of 0 still writes selected_count).
uint vk_select_tiles(uint n) { return max(1u, n / TILE_ELEMENTS + (n % TILE_ELEMENTS != 0u ? 1u : 0u)); }

// Vector index of the vector invocation tid owns in row 0 of `tile`.
uint vk_select_first_vector(uint tile) { return tile * TILE_VECTORS + gl_LocalInvocationIndex; }

// Loads the invocation's vectors of `tile` and returns the mask of the elements the predicate keeps.
// Flagged selection of indices never reads the input. A full tile with vector-aligned input and flags
// takes a branch-free path, so every load of the invocation is in flight before the first is used.
uint vk_select_load_tile(uint tile, uint n, out uvec4 vectors[ITEMS]) {
  const bool flagged = vk_select_predicate() == PRED_FLAGGED;
  const bool values_needed = !(flagged && vk_select_mode(SELECT_INDICES));
  const uint first = vk_select_first_vector(tile);
  const bool full = n - min(n, tile * TILE_ELEMENTS) >= TILE_ELEMENTS && vk_select_mode(SELECT_IN_VECTORS) &&
                    (!flagged || vk_select_mode(SELECT_FLAG_VECTORS));
  uvec4 flags[ITEMS];
  if (full) {
    const uint in_base = vk_select_shift(SHIFT_IN) * ELEM_WORDS / 4u;
    const uint flag_shift = vk_select_shift(SHIFT_FLAGS);
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
      const uint v = first + k * WG_SIZE;
      vectors[k] = values_needed ? in_vectors[in_base + v] : uvec4(0u);
#if VEC_N == 4
      flags[k] = flagged ? flag_quads[flag_shift / 4u + v] : uvec4(0u);
#else
      flags[k] = flagged ? uvec4(flag_pairs[flag_shift / 2u + v], 0u, 0u) : uvec4(0u);
#endif
    }
  } else {
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
      const uint v = first + k * WG_SIZE;
      vectors[k] = values_needed ? vk_select_load_vector(v, n) : uvec4(0u);
      flags[k] = flagged ? vk_select_load_flags(v, n) : uvec4(0u);
    }
  }
  uint keep = 0u;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint v = first + k * WG_SIZE;
    [[unroll]] for (uint c = 0u; c < VEC_N; ++c)
      if (v * VEC_N + c < n && vk_select_keep(vk_vector_element(vectors[k], c), flags[k][c]))
        keep |= 1u << (k * VEC_N + c);
  }
  return keep;
}

// Kept elements of a tile (every invocation calls it: barriers), for the fallback and the count pass.
uint vk_select_count_tile(uint tile, uint n) {
  uvec4 vectors[ITEMS];
  const uint keep = vk_select_load_tile(tile, n, vectors);
  uvec4 total;
  vk_workgroup_exclusive_count_scan(uvec4(bitCount(keep), 0u, 0u, 0u), total);
  return total.x;
}

uint vk_row_field(uvec4 packed, uint k) { return (packed[k >> 1u] >> (16u * (k & 1u))) & 0xFFFFu; }

// Ranks: per row k, the kept elements of the invocations before this one in the row (rank_in_row) and
// the row's total (row_total). Returns the tile's kept count.
uint vk_select_rank_rows(uint keep, out uvec4 rank_in_row, out uvec4 row_total) {
  uvec4 packed = uvec4(0u);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
    packed[k >> 1u] += bitCount((keep >> (k * VEC_N)) & VECTOR_MASK) << (16u * (k & 1u));
  rank_in_row = vk_workgroup_exclusive_count_scan(packed, row_total);
  uint kept = 0u;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) kept += vk_row_field(row_total, k);
  return kept;
}

#if !defined(VKPRIM_SELECT_DIRECT)
shared uint s_stage[TILE_ELEMENTS * ELEM_WORDS];

void vk_stage(uint slot, BITS_T bits) {
#if VEC_N == 4
  s_stage[slot] = bits;
#else
  s_stage[2u * slot] = bits.x;
  s_stage[2u * slot + 1u] = bits.y;
#endif
}

BITS_T vk_staged(uint slot) {
#if VEC_N == 4
  return s_stage[slot];
#else
  return uvec2(s_stage[2u * slot], s_stage[2u * slot + 1u]);
#endif
}
#endif

// Stages the kept elements at slots 0..kept-1 in input order, and with `rejected` the valid rejected ones
// at kept + their rank among the rejected (element index within the tile minus the kept before it).
// SELECT_INDICES stages input positions (tile_start + element index within the tile) instead.
// VKPRIM_SELECT_DIRECT (Select only, no rejected ones): kept element i goes straight to
// output[selected_base + i] instead, with no staging and no shared memory. A subgroup's stores
// then cover a few sectors with gaps rather than one run, which the H100 absorbs: the staged tile's shared
// memory and its round trip cost more (2^28 u32 flagged: 1395 -> 1248 us).
void vk_select_stage(uvec4 vectors[ITEMS], uint keep, uvec4 rank_in_row, uvec4 row_total, uint kept, bool rejected,
                     uint valid, uint tile_start, uint selected_base) {
  const bool indices = vk_select_mode(SELECT_INDICES);
  uint row_base = 0u;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    uint rank = row_base + vk_row_field(rank_in_row, k);
    const uint local = (k * WG_SIZE + gl_LocalInvocationIndex) * VEC_N;
    [[unroll]] for (uint c = 0u; c < VEC_N; ++c) {
      const BITS_T bits = indices ? vk_index_bits(tile_start + local + c) : vk_vector_element(vectors[k], c);
      if ((keep & (1u << (k * VEC_N + c))) != 0u) {
#if defined(VKPRIM_SELECT_DIRECT)
        vk_select_store_output(selected_base + rank, bits);
#else
        vk_stage(rank, bits);
#endif
        rank += 1u;
      }
#if !defined(VKPRIM_SELECT_DIRECT)
      else if (rejected && local + c < valid) {
        vk_stage(kept + (local + c - rank), bits);
      }
#endif
    }
    row_base += vk_row_field(row_total, k);
  }
}

#if !defined(VKPRIM_SELECT_DIRECT)
// Writes staged slots 0..limit-1 with consecutive invocations on consecutive slots: kept slot i to
// output[selected_base + i], rejected slot i (>= kept) to output or the spill (scratch) at
// rejected_base + i - kept.
void vk_select_write_tile(uint kept, uint limit, uint selected_base, uint rejected_base, bool rejected_to_spill) {
  [[unroll]] for (uint j = 0u; j < ITEMS * VEC_N; ++j) {
    const uint i = j * WG_SIZE + gl_LocalInvocationIndex;
    if (i < limit) {
      const BITS_T bits = vk_staged(i);
      if (i < kept) vk_select_store_output(selected_base + i, bits);
      else if (rejected_to_spill) vk_select_store_spill(rejected_base + i - kept, bits);
      else vk_select_store_output(rejected_base + i - kept, bits);
    }
  }
}
#endif

#endif  // VKPRIM_SELECT_TILE_GLSL
