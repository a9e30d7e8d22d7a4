// Workgroup exclusive sum of one uvec4 of counts per invocation (componentwise, in invocation order) and
// the workgroup's total, independent of the kernel's value type (stream compaction packs per-row counts
// into 16-bit fields of the components, common/select_tile.glsl).
//   Subgroups: subgroup exclusive adds, then the subgroup totals through shared memory as in
//   common/workgroup_scan.glsl: scanned by subgroup 0 where it has a lane per total, else folded by every
//   subgroup.
//   VKPRIM_NO_SUBGROUPS: Hillis & Steele (1986) over WG_SIZE values in shared memory.
// Requires common/config.glsl. Every invocation calls it (it contains barriers); the shared array may be
// reused after it returns.
#ifndef VKPRIM_WORKGROUP_COUNT_SCAN_GLSL
#define VKPRIM_WORKGROUP_COUNT_SCAN_GLSL

#include "common/config.glsl"
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

shared uvec4 wg_count_shared[WG_SIZE + 1];

uvec4 vk_workgroup_exclusive_count_scan(uvec4 x, out uvec4 total) {
  const uint tid = gl_LocalInvocationIndex;
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint lane = gl_SubgroupInvocationID;
  const uint subgroup = gl_SubgroupID;
  const uint subgroups = gl_NumSubgroups;
  const uvec4 exclusive = subgroupExclusiveAdd(x);
  if (lane == gl_SubgroupSize - 1u || tid == WG_SIZE - 1u) wg_count_shared[subgroup] = exclusive + x;
  barrier();
  uvec4 result;
  if (subgroups <= gl_SubgroupSize) {
    // One total per lane of subgroup 0, which scans them and writes each subgroup's prefix back.
    if (subgroup == 0u) {
      // Every lane loads (lane < WG_SIZE) and selects, so that no lane branches apart before the scan
      // (docs/ALGORITHMS.md, "Reconvergence").
      const uvec4 loaded = wg_count_shared[lane];
      const uvec4 t = lane < subgroups ? loaded : uvec4(0u);
      const uvec4 p = subgroupExclusiveAdd(t);
      if (lane < subgroups) wg_count_shared[lane] = p;
      if (lane == subgroups - 1u) wg_count_shared[WG_SIZE] = p + t;
    }
    barrier();
    total = wg_count_shared[WG_SIZE];
    result = wg_count_shared[subgroup] + exclusive;
  } else {
    // More totals than lanes: every subgroup folds them itself, as common/workgroup_scan.glsl does (a
    // raking loop that writes prefixes back miscompiles on Mesa 22.3's lavapipe under the memory-model
    // pragma, which the chained select uses).
    const uint run = (subgroups + gl_SubgroupSize - 1u) / gl_SubgroupSize;
    const uint first = lane * run;
    uvec4 before = uvec4(0u), all = uvec4(0u);
    for (uint j = 0u; j < run; ++j) {
      const uint s = first + j;
      const uvec4 t = s < subgroups ? wg_count_shared[s] : uvec4(0u);
      all += t;
      before += s < subgroup ? t : uvec4(0u);
    }
    total = subgroupAdd(all);
    result = subgroupAdd(before) + exclusive;
  }
  barrier();
  return result;
#else
  wg_count_shared[tid] = x;
  barrier();
  for (uint d = 1u; d < WG_SIZE; d <<= 1u) {
    const uvec4 v = tid >= d ? wg_count_shared[tid - d] + wg_count_shared[tid] : wg_count_shared[tid];
    barrier();
    wg_count_shared[tid] = v;
    barrier();
  }
  total = wg_count_shared[WG_SIZE - 1u];
  const uvec4 result = tid > 0u ? wg_count_shared[tid - 1u] : uvec4(0u);
  barrier();
  return result;
#endif
}

#endif  // VKPRIM_WORKGROUP_COUNT_SCAN_GLSL
