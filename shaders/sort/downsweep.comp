#version 460
// reduce_then_scan, phase 3 of a digit pass: workgroup g ranks each tile of its run stably by digit
// (common/radix.glsl) and scatters it through shared memory to its global position: the exclusive scan of
// the row totals (keys of smaller digits) + its table entry (same digit, earlier workgroups) + the keys of
// that digit in its earlier tiles.
// Defines: VKPRIM_KEY64, VKPRIM_KEY8, VKPRIM_KEY16, VKPRIM_VALUE_WORDS, VKPRIM_VALUE_UNIT, VKPRIM_NO_SUBGROUPS,
// VKPRIM_PARTITIONED, VKPRIM_DIRECT_SCATTER.
// Specialization: WG_SIZE, ITEMS, SUBGROUP_MIN, KEY_FLAGS, STAGE_ROUNDS (common/radix.glsl; the runtime
// leaves it at 1).
// Bindings/push: common/radix.glsl (bit = this pass's first bit).
#extension GL_GOOGLE_include_directive : require
#define SORT_RANKING 1
#include "common/radix.glsl"

shared uint s_running[RADIX_DIGITS];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = sort_count();
  const uint tiles = sort_tiles(n);
  const uint groups = sort_groups();
  const uint group = vk_workgroup_index();
  if (group >= groups) return;
  const uint per_group = tiles / groups + (tiles % groups != 0u ? 1u : 0u);
  const uint first_tile = min(group * per_group, tiles);
  const uint end_tile = min(first_tile + per_group, tiles);
  uint total;
  const uint digit_total = tid < RADIX_DIGITS ? meta[META_REGION + tid] : 0u;
  const uint smaller = sort_workgroup_scan(digit_total, total);
  if (tid < RADIX_DIGITS) s_running[tid] = smaller + meta[META_REGION + RADIX_DIGITS + tid * groups + group];
  barrier();
#if !defined(VKPRIM_DIRECT_SCATTER)
  if (first_tile < end_tile) sort_load_tile(first_tile, n);
#endif
  for (uint tile = first_tile; tile < end_tile; ++tile) {
#if defined(VKPRIM_DIRECT_SCATTER)
    sort_load_tile(tile, n);
#endif
    sort_rank_tile();
    sort_stage_keys();
    if (tid < RADIX_DIGITS) {
      s_base[tid] = s_running[tid] - s_start[tid];
      s_running[tid] += s_count[tid];
    }
    barrier();
#if !defined(VKPRIM_DIRECT_SCATTER)
    // Staged, the keys leave t_key free: the next tile's loads are issued now and arrive during the
    // scatter instead of after it (one tile's load latency hidden per tile, no extra registers).
    if (tile + 1u < end_tile) sort_load_tile(tile + 1u, n);
#endif
    sort_scatter_tile(tile, n);
  }
}
