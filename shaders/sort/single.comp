#version 460
// One-workgroup radix sort, for counts that fit one tile (the single-tile path of CUB's DeviceRadixSort,
// after Merrill & Grimshaw's block-wide radix sort): the workgroup loads every key (and value) once, runs
// every digit pass in shared memory (the stable in-tile rank of common/radix.glsl, each key staged at its
// ranked position, then read back in striped order, which is the next pass's tile order) and stores the
// result once. One dispatch: no histogram pass, no scratch, no look-back, so nothing waits on another
// workgroup. Every key and value is in registers before the first store, so the runtime binds the caller's
// buffers as both input (bindings 0, 2) and output (1, 3): the sort is in place.
// Defines: VKPRIM_KEY64, VKPRIM_KEY8, VKPRIM_KEY16, VKPRIM_VALUE_WORDS (0, 1 or 2), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE, ITEMS, SUBGROUP_MIN, KEY_FLAGS (common/radix.glsl).
// Push: common/radix.glsl (count <= TILE, bit = begin_bit, flags carry the digit-pass count).
#extension GL_GOOGLE_include_directive : require
#include "common/radix_block.glsl"

#if VKPRIM_VALUE_WORDS > 0
VAL_T t_value[ITEMS];

void stage_values(uint n) {
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
#if VKPRIM_VALUE_WORDS == 2
    sort_block_stage_word(i, 0u, t_value[i].x, n);
    sort_block_stage_word(i, 1u, t_value[i].y, n);
#else
    sort_block_stage_word(i, 0u, t_value[i], n);
#endif
  }
}

VAL_T staged_value(uint at) {
#if VKPRIM_VALUE_WORDS == 2
  return uvec2(sort_block_staged_word(at, 0u), sort_block_staged_word(at, 1u));
#else
  return sort_block_staged_word(at, 0u);
#endif
}
#endif

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = min(sort_count(), TILE);
  const uint passes = sort_passes();
  sort_load_tile(0u, n);
#if VKPRIM_VALUE_WORDS > 0
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = sort_striped_index(i);
    t_value[i] = index < n ? values_in[sort_shift(2u) + index] : VAL_T(0u);
  }
#endif
  // `passes` is a push constant: the loop and its barriers are uniform.
  for (uint p = 0u; p < passes; ++p) {
    const uint bit = pc.bit + 8u * p;
    sort_block_rank(bit, sort_digit_mask(bit), n);  // ends with a barrier: s_mem is free
    const bool last = p + 1u == passes;
    sort_block_stage_keys(n);
    barrier();
    if (last) {
      // Consecutive invocations store consecutive keys.
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
        const uint j = k * WG_SIZE + tid;
        if (j < n) SORT_KEY_OUT(sort_shift(1u) + j, sort_unordered(sort_block_staged_key(j)));
      }
    } else {
      sort_block_reload_keys(n);
    }
#if VKPRIM_VALUE_WORDS > 0
    barrier();
    stage_values(n);
    barrier();
    if (last) {
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
        const uint j = k * WG_SIZE + tid;
        if (j < n) values_out[sort_shift(3u) + j] = staged_value(j);
      }
    } else {
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
        const uint index = sort_striped_index(i);
        if (index < n) t_value[i] = staged_value(index);
      }
    }
#endif
    barrier();  // the next pass's counters reuse s_mem
  }
}
