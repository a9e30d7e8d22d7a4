// Workgroup layer for scans: an exclusive scan across the workgroup of one ROW_T per invocation
// (componentwise, in invocation order), and the workgroup's total. The scan kernels keep these steps rather
// than common/workgroup_scan.glsl's: with this rake as a policy of that header the u32 chained scan's 256 x 8
// tiles ran 5% slower on an H200 (docs/PERFORMANCE.md, Scan).
//   Subgroups (full ones only): each subgroup scans its values (subgroup exclusive scan) and the last lane
//   of each writes the subgroup total to shared memory. Where subgroup 0 has a lane per total it scans
//   them and writes the prefixes back (three barriers); else every subgroup folds the totals itself (each
//   lane serially combines a run of ceil(subgroups / subgroup size) of them; one subgroup reduction of the
//   runs before its own gives its prefix, one of all of them the total; two barriers).
//   VKPRIM_NO_SUBGROUPS: Hillis & Steele (1986) over WG_SIZE values in shared memory, log2(WG_SIZE) steps.
// Requires common/config.glsl (WG_SIZE, a power of two) and common/subgroup_scan.glsl. Every invocation
// calls it (it contains barriers); wg_scan_shared may be reused after it returns.
#ifndef VKPRIM_WORKGROUP_ROW_SCAN_GLSL
#define VKPRIM_WORKGROUP_ROW_SCAN_GLSL

#include "common/config.glsl"
#include "common/subgroup_scan.glsl"

// Sized by WG_SIZE: enough for one value per subgroup at any subgroup size (and per invocation in the
// emulation), plus the total.
shared ROW_T wg_scan_shared[WG_SIZE + 1];

#if !defined(VKPRIM_NO_SUBGROUPS)
// c ? a : b as a select (common/subgroup.glsl, vk_pick); a user value's row is an array of one value.
ROW_T vk_row_pick(bool c, ROW_T a, ROW_T b) {
#if defined(VKPRIM_TYPE_USER)
  ROW_T r;
  r[0] = vk_pick(c, a[0], b[0]);
  return r;
#else
  return c ? a : b;
#endif
}
#endif

ROW_T vk_workgroup_exclusive_scan(ROW_T x, out ROW_T total) {
  const uint tid = gl_LocalInvocationIndex;
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint lane = gl_SubgroupInvocationID;
  const uint subgroup = gl_SubgroupID;
  const uint subgroups = gl_NumSubgroups;
  const ROW_T exclusive = vk_subgroup_exclusive_scan(x);
  // Subgroups are full (src/context_impl.hpp full_subgroup_size), so each one's last lane holds its total.
  if (lane == gl_SubgroupSize - 1u) wg_scan_shared[subgroup] = vk_row_op(exclusive, x);
  barrier();
  ROW_T result;
  if (subgroups <= gl_SubgroupSize) {
    // One total per lane of subgroup 0, which scans them and writes each subgroup's prefix back.
    if (subgroup == 0u) {
      // Every lane loads (lane < subgroup size <= WG_SIZE) and selects, so that no lane branches apart
      // before the scan (docs/ALGORITHMS.md, "Reconvergence").
      const ROW_T t = vk_row_pick(lane < subgroups, wg_scan_shared[lane], vk_row_identity());
      const ROW_T p = vk_subgroup_exclusive_scan(t);
      if (lane < subgroups) wg_scan_shared[lane] = p;
      if (lane == gl_SubgroupSize - 1u) wg_scan_shared[WG_SIZE] = vk_row_op(p, t);
    }
    barrier();
    total = wg_scan_shared[WG_SIZE];
    result = vk_row_op(wg_scan_shared[subgroup], exclusive);
  } else {
    // More totals than lanes (small subgroups): every subgroup folds them itself, each lane a run of them
    // in order, then two subgroup reductions. A raking subgroup writing prefixes back from such runs, in a
    // loop, made Mesa 22.3's lavapipe write nothing under the memory-model pragma.
    const uint run = (subgroups + gl_SubgroupSize - 1u) / gl_SubgroupSize;
    const uint first = lane * run;
    ROW_T before = vk_row_identity(), all = vk_row_identity();
    for (uint j = 0u; j < run; ++j) {
      const uint s = first + j;
      const ROW_T t = s < subgroups ? wg_scan_shared[s] : vk_row_identity();
      all = vk_row_op(all, t);
      before = s < subgroup ? vk_row_op(before, t) : before;
    }
    total = vk_subgroup_row_reduce(all);
    result = vk_row_op(vk_subgroup_row_reduce(before), exclusive);
  }
  barrier();
  return result;
#else
  wg_scan_shared[tid] = x;
  barrier();
  for (uint d = 1u; d < WG_SIZE; d <<= 1u) {
    const ROW_T v = tid >= d ? vk_row_op(wg_scan_shared[tid - d], wg_scan_shared[tid]) : wg_scan_shared[tid];
    barrier();
    wg_scan_shared[tid] = v;
    barrier();
  }
  total = wg_scan_shared[WG_SIZE - 1u];
  const ROW_T result = tid > 0u ? wg_scan_shared[tid - 1u] : vk_row_identity();
  barrier();
  return result;
#endif
}

#endif  // VKPRIM_WORKGROUP_ROW_SCAN_GLSL
