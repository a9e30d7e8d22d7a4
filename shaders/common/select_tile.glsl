// Tile layer of stream compaction. A tile is WG_SIZE x ITEMS 16-byte vectors (VEC_N elements each); row k
// is vectors k * WG_SIZE .. k * WG_SIZE + WG_SIZE - 1 and invocation tid owns vector k * WG_SIZE + tid of
// every row, so loads are coalesced. Each invocation keeps a bit mask of its kept elements (bit
// k * VEC_N + c; ITEMS * VEC_N <= 32). One workgroup exclusive scan of the per-row counts, packed in
// 16-bit fields (two rows per uvec4 component; a row holds at most 4 * 1024 elements), gives every kept
// element its rank within the tile in input order. vk_select_write_tile then writes the kept elements (and
// for Partition the rejected ones) one row at a time: each subgroup stages its runs of the row in its own
// slice of shared memory and writes them with consecutive invocations on consecutive addresses
// (coalesced), whatever the output's alignment, with no workgroup barrier and no tile-sized staging area.
// Requires common/config.glsl, common/select_io.glsl, common/workgroup_count_scan.glsl.
#ifndef VKPRIM_SELECT_TILE_GLSL
#define VKPRIM_SELECT_TILE_GLSL

#extension GL_KHR_memory_scope_semantics : require
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#define TILE_VECTORS (WG_SIZE * ITEMS)
#define TILE_ELEMENTS (TILE_VECTORS * VEC_N)
#define VECTOR_MASK ((1u << VEC_N) - 1u)

// Tiles of n elements (at least one, so a count of 0 still writes selected_count).
uint vk_select_tiles(uint n) { return max(1u, n / TILE_ELEMENTS + (n % TILE_ELEMENTS != 0u ? 1u : 0u)); }

// Vector index of the vector invocation tid owns in row 0 of `tile`.
uint vk_select_first_vector(uint tile) { return tile * TILE_VECTORS + gl_LocalInvocationIndex; }

// Mask (bit c) of the elements of vector v that are before n and that the predicate keeps.
uint vk_select_keep_vector(uint v, uint n, uvec4 vector, uvec4 flags) {
  uint keep = 0u;
  [[unroll]] for (uint c = 0u; c < VEC_N; ++c)
    if (v * VEC_N + c < n && vk_select_keep(vk_vector_element(vector, c), flags[c])) keep |= 1u << c;
  return keep;
}

// What is written for element c of a vector whose first element is at tile position `local`: its bits, or
// with SELECT_INDICES its input position.
BITS_T vk_select_output_bits(uvec4 vector, uint c, uint tile_start, uint local) {
  return vk_select_mode(SELECT_INDICES) ? vk_index_bits(tile_start + local + c) : vk_vector_element(vector, c);
}

// Loads the invocation's vectors of `tile` and returns the mask of the elements the predicate keeps.
// Flagged selection of indices never reads the input. A full tile with vector-aligned input and flags
// takes a branch-free path, so every load of the invocation is in flight before the first is used.
uint vk_select_load_tile(uint tile, uint n, out uvec4 vectors[ITEMS]) {
  const bool flagged = vk_select_predicate() == PRED_FLAGGED;
  const bool values_needed = vk_select_reads_input();
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
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
    keep |= vk_select_keep_vector(first + k * WG_SIZE, n, vectors[k], flags[k]) << (k * VEC_N);
  return keep;
}

// Kept elements of a tile (every invocation calls it: barriers), for the count pass: all of the
// invocation's loads are in flight at once.
uint vk_select_count_tile(uint tile, uint n) {
  uvec4 vectors[ITEMS];
  const uint keep = vk_select_load_tile(tile, n, vectors);
  uvec4 total;
  vk_workgroup_exclusive_scan(uvec4(bitCount(keep), 0u, 0u, 0u), total);
  return total.x;
}

// The same count one vector (and its flags) at a time, for the chained kernel's fallback: the caller
// holds its own tile in registers meanwhile, and a whole second tile in flight would set the kernel's
// register count (H100: 16 registers per vector of the tile instead of 8, so fewer workgroups resident)
// for a path that rarely runs.
uint vk_select_count_tile_low_registers(uint tile, uint n) {
  const bool flagged = vk_select_predicate() == PRED_FLAGGED;
  const bool values_needed = vk_select_reads_input();
  const uint first = vk_select_first_vector(tile);
  uint kept = 0u;
  [[dont_unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint v = first + k * WG_SIZE;
    const uvec4 vector = values_needed ? vk_select_load_vector(v, n) : uvec4(0u);
    const uvec4 flags = flagged ? vk_select_load_flags(v, n) : uvec4(0u);
    kept += bitCount(vk_select_keep_vector(v, n, vector, flags));
  }
  uvec4 total;
  vk_workgroup_exclusive_scan(uvec4(kept, 0u, 0u, 0u), total);
  return total.x;
}

uint vk_row_field(uvec4 packed, uint k) { return (packed[k >> 1u] >> (16u * (k & 1u))) & 0xFFFFu; }

// The invocation's kept count of each row, in 16-bit fields (vk_row_field).
uvec4 vk_select_row_counts(uint keep) {
  uvec4 packed = uvec4(0u);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
    packed[k >> 1u] += bitCount((keep >> (k * VEC_N)) & VECTOR_MASK) << (16u * (k & 1u));
  return packed;
}

// Ranks: per row k, the kept elements of the invocations before this one in the row (rank_in_row) and
// the row's total (row_total). Returns the tile's kept count.
uint vk_select_rank_rows(uint keep, out uvec4 rank_in_row, out uvec4 row_total) {
  const uvec4 packed = vk_select_row_counts(keep);
  rank_in_row = vk_workgroup_exclusive_scan(packed, row_total);
  uint kept = 0u;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) kept += vk_row_field(row_total, k);
  return kept;
}

// Staging area: one row's elements of each subgroup at a time (16 bytes per invocation: a subgroup's row
// holds at most its lanes * VEC_N elements, kept and rejected together).
shared uint s_stage[WG_SIZE * VEC_N * ELEM_WORDS];

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

// Orders the subgroup's s_stage traffic between its lanes: one subgroup control barrier that carries
// acquire-release semantics for shared memory, so it is the release and the acquire itself under either
// memory model. Without subgroups every invocation reads only what it staged itself.
void vk_subgroup_sync_stage() {
#if !defined(VKPRIM_NO_SUBGROUPS)
  controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
#endif
}

// Where vk_select_write_tile puts the rejected elements (Partition): nowhere (Select), to the spill in
// scratch (chained Partition in input order), to the output in input order (count_scan_scatter Partition)
// or to the output in reverse order (RejectedOrder::reversed: each element's place is known in one pass;
// compiled in where the kernel defines VKPRIM_SELECT_REVERSIBLE, so Select's chained kernel has none of it).
#define REJECTED_DROPPED 0u
#define REJECTED_TO_SPILL 1u
#define REJECTED_TO_OUTPUT 2u
#define REJECTED_TO_OUTPUT_REVERSED 3u

// Writes kept element i of the tile to output[selected_base + i] and, unless rejected_to is
// REJECTED_DROPPED, the tile's rejected element r (r-th among its first `valid` elements that are not kept)
// to rejected_base + r of the spill or the output (rejected_base - r for REJECTED_TO_OUTPUT_REVERSED: the
// stores of a run then fall on descending addresses, still consecutive). Row by row: a subgroup's kept
// elements of one row are one contiguous run of the output and its rejected ones another, so the subgroup stages both runs in its
// own slice of s_stage (subgroup barriers only, no workgroup barrier) and writes them with consecutive
// lanes on consecutive elements. Stores straight from registers (each lane its own elements) leave every
// store instruction scattered over a run, so each 32-byte sector is written piecemeal by up to VEC_N
// instructions: 2^28 u32 flagged on an H100 spent ~430 us on stores that way (docs/PERFORMANCE.md); a
// whole staged tile costs tile-sized shared memory and two workgroup barriers. Without subgroups every
// invocation is its own run of at most VEC_N elements. Every invocation calls it (subgroup barriers).
void vk_select_write_tile(uvec4 vectors[ITEMS], uint keep, uvec4 rank_in_row, uvec4 row_total, uint tile_start,
                          uint valid, uint selected_base, uint rejected_base, uint rejected_to) {
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint lane = gl_SubgroupInvocationID;
  const uint lanes = min(gl_SubgroupSize, WG_SIZE);  // a subgroup larger than the workgroup is partial
  const uint subgroup_first = gl_SubgroupID * gl_SubgroupSize;  // its first invocation
  const uvec4 run_first = subgroupBroadcastFirst(rank_in_row);  // lane 0's rank: where each row's run starts
  const uvec4 run_length = subgroupAdd(vk_select_row_counts(keep));
#else
  const uint lane = 0u;
  const uint lanes = 1u;
  const uint subgroup_first = gl_LocalInvocationIndex;
  const uvec4 run_first = rank_in_row;
  const uvec4 run_length = vk_select_row_counts(keep);
#endif
  const uint region = subgroup_first * VEC_N;
  const bool rejected = rejected_to != REJECTED_DROPPED;
  uint row_base = 0u;  // kept elements of the tile's earlier rows
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint first = vk_row_field(run_first, k);
    const uint kept_run = vk_row_field(run_length, k);
    const uint kept_before_lane = vk_row_field(rank_in_row, k) - first;  // within the subgroup's row
    uint kept_slot = region + kept_before_lane;
    // The lane's rejected elements follow the kept run, after those of earlier lanes: a lane that has a
    // valid element sees only valid elements before it in the row.
    uint rejected_slot = region + kept_run + lane * VEC_N - kept_before_lane;
    const uint local = (k * WG_SIZE + gl_LocalInvocationIndex) * VEC_N;
    [[unroll]] for (uint c = 0u; c < VEC_N; ++c) {
      const BITS_T bits = vk_select_output_bits(vectors[k], c, tile_start, local);
      if ((keep & (1u << (k * VEC_N + c))) != 0u) {
        vk_stage(kept_slot, bits);
        kept_slot += 1u;
      } else if (rejected && local + c < valid) {
        vk_stage(rejected_slot, bits);
        rejected_slot += 1u;
      }
    }
    vk_subgroup_sync_stage();
    // The subgroup's first element of the row, and the rank among the tile's rejected elements of its first
    // rejected one (elements before it minus kept ones before it).
    const uint row_start = (k * WG_SIZE + subgroup_first) * VEC_N;
    const uint span = rejected ? min(lanes * VEC_N, valid - min(valid, row_start)) : kept_run;
    const uint kept_base = selected_base + row_base + first;
#if defined(VKPRIM_SELECT_REVERSIBLE)
    const uint rejected_before = row_start - (row_base + first);
    const uint rejected_first = rejected_to == REJECTED_TO_OUTPUT_REVERSED ? rejected_base - rejected_before
                                                                           : rejected_base + rejected_before;
#else
    const uint rejected_first = rejected_base + row_start - (row_base + first);
#endif
    for (uint i = 0u; i < VEC_N; ++i) {  // span <= lanes * VEC_N
      const uint j = lane + i * lanes;
      if (j >= span) break;
      const BITS_T bits = vk_staged(region + j);
      if (j < kept_run) vk_select_store_output(kept_base + j, bits);
      else if (rejected_to == REJECTED_TO_SPILL) vk_select_store_spill(rejected_first + j - kept_run, bits);
#if defined(VKPRIM_SELECT_REVERSIBLE)
      else if (rejected_to == REJECTED_TO_OUTPUT_REVERSED)
        vk_select_store_output(rejected_first - (j - kept_run), bits);
#endif
      else vk_select_store_output(rejected_first + j - kept_run, bits);
    }
    vk_subgroup_sync_stage();  // the next row reuses the slice
    row_base += vk_row_field(row_total, k);
  }
}

#endif  // VKPRIM_SELECT_TILE_GLSL
