#version 460
// Onesweep, upfront pass (Adinets & Merrill 2022): one read of the keys builds the 256-bin digit histogram of
// EVERY digit pass (shared-memory atomics, then one global atomicAdd per non-zero bin into meta[META_HIST +
// pass * 256 + digit], which the runtime cleared). For small direct records (pc.hist_partials set) each
// workgroup stores its own histograms instead, which the first digit pass sums, and workgroup 0 clears the
// header: no vkCmdFillBuffer and no barrier before this pass. It also fills the digit passes' tile state (one
// word per tile and digit) with SORT_STATE_UNWRITTEN, which the first pass reads as not yet written, so no
// fill of it is needed. The digit passes' tile is pc.param keys, which may be smaller than this kernel's TILE
// (src/sort.cpp: smaller tiles for small counts), so the states to fill are counted in it. Workgroups stride
// over tiles of TILE keys, reading them coalesced.
// Defines: VKPRIM_KEY64, VKPRIM_KEY8, VKPRIM_KEY16. Specialization: WG_SIZE, ITEMS (keys per invocation per
// tile), KEY_FLAGS.
// Bindings/push: common/radix.glsl (bit = begin_bit, flags carry the digit-pass count, param = the digit
// passes' keys per tile).
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
  const uint state_tiles = (n + pc.param - 1u) / pc.param;
  for (uint w = group * WG_SIZE + tid; w < state_tiles * RADIX_DIGITS; w += groups * WG_SIZE)
    meta[META_REGION + w] = SORT_STATE_UNWRITTEN;
  barrier();
  // A tile's loads all issue before its atomics (sort_load_ordered), then the atomics go pass by pass (a
  // uniform loop). With each key loaded inside its own bounds test, NVIDIA's code keeps one load in flight per
  // invocation and the kernel is bound by memory latency: 195-197 us against 130-132 at 2^26 u32 keys (a read
  // takes 88; H100). The padding keys of a last tile count as the largest digit of every pass
  // and are taken off at the end.
  uint padding = 0u;
  for (uint tile = group; tile < tiles; tile += groups) {
    KEY_T keys[ITEMS];
    sort_load_ordered(tile * TILE, tid, WG_SIZE, n, keys);
    padding += sort_tile_padding(tile, n);
    for (uint p = 0u; p < passes; ++p) {
      const uint bit = pc.bit + 8u * p;
      const uint mask = sort_digit_mask(bit);
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
        atomicAdd(s_hist[p * RADIX_DIGITS + sort_digit(keys[k], bit, mask)], 1u);
    }
  }
  barrier();
  const bool partials = (KEY_FLAGS & SORT_HIST_PARTIALS) != 0u && pc.hist_partials != 0u;
  if (partials && group == 0u && tid < META_HEADER_WORDS) meta[tid] = 0u;  // tickets and statistics
  for (uint w = tid; w < passes * RADIX_DIGITS; w += WG_SIZE) {
    const uint pass = w / RADIX_DIGITS, digit = w % RADIX_DIGITS;
    const uint v = s_hist[w] - (digit == sort_digit_mask(pc.bit + 8u * pass) ? padding : 0u);
    if (partials) meta[pc.hist_partials + (pass * groups + group) * RADIX_DIGITS + digit] = v;
    else if (v != 0u) atomicAdd(meta[META_HIST + w], v);
  }
}
