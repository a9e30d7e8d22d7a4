#version 460
// Onesweep, upfront pass (Adinets & Merrill 2022): one read of the keys builds the 256-bin digit
// histogram of EVERY digit pass (shared-memory atomics, then one global atomicAdd per non-zero bin into
// meta[META_HIST + pass * 256 + digit], which the runtime cleared). It also clears the tile state the
// first digit pass will use (region 0, one word per tile and digit), so no fill of it is needed.
// Workgroups stride over tiles of TILE keys, reading them coalesced.
// Defines: VKPRIM_KEY64. Specialization: WG_SIZE, ITEMS (keys per invocation per tile), KEY_FLAGS.
// Bindings/push: common/radix.glsl (bit = begin_bit, flags carry the digit-pass count).
#extension GL_GOOGLE_include_directive : require
#include "common/radix.glsl"

shared uint s_hist[8u * RADIX_DIGITS];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = sort_count();
  const uint tiles = sort_tiles(n);
  const uint groups = sort_groups();
  const uint group = vk_workgroup_index();
  if (group >= groups) return;
  const uint passes = sort_passes();
  for (uint w = tid; w < passes * RADIX_DIGITS; w += WG_SIZE) s_hist[w] = 0u;
  for (uint w = group * WG_SIZE + tid; w < tiles * RADIX_DIGITS; w += groups * WG_SIZE) meta[META_REGION + w] = 0u;
  barrier();
  const uint shift = sort_shift(0u);
  for (uint tile = group; tile < tiles; tile += groups) {
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
      const uint index = tile * TILE + k * WG_SIZE + tid;
      if (index < n) {
        const KEY_T ordered = sort_ordered(keys_in[shift + index]);
        // Unrolled over the most passes a key has, so the atomics of one key issue back to back.
        [[unroll]] for (uint p = 0u; p < 4u * KEY_WORDS; ++p)
          if (p < passes) atomicAdd(s_hist[p * RADIX_DIGITS + sort_digit(ordered, pc.bit + 8u * p)], 1u);
      }
    }
  }
  barrier();
  for (uint w = tid; w < passes * RADIX_DIGITS; w += WG_SIZE) {
    const uint v = s_hist[w];
    if (v != 0u) atomicAdd(meta[META_HIST + w], v);
  }
}
