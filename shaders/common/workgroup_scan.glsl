// Workgroup layer for scans: an exclusive scan across the workgroup of one ROW_T per invocation
// (componentwise, in invocation order), and the workgroup's total.
//   Subgroups: each subgroup scans its values (subgroup exclusive scan), the last lane of each writes the
//   subgroup total to shared memory, subgroup 0 rakes those totals (each lane serially scans a run of
//   ceil(subgroups / subgroup size) of them, then one subgroup exclusive scan joins the runs), and every
//   invocation adds its subgroup's prefix. Two barriers, any subgroup size.
//   VKPRIM_NO_SUBGROUPS: Hillis & Steele (1986) over WG_SIZE values in shared memory, log2(WG_SIZE) steps.
// Requires common/config.glsl (WG_SIZE, a power of two) and common/subgroup_scan.glsl. Every invocation
// calls it (it contains barriers); wg_scan_shared may be reused after it returns.
#ifndef VKPRIM_WORKGROUP_SCAN_GLSL
#define VKPRIM_WORKGROUP_SCAN_GLSL

#include "common/config.glsl"
#include "common/subgroup_scan.glsl"

// Sized by WG_SIZE: enough for one value per subgroup at any subgroup size (and per invocation in the
// emulation), plus the total.
shared ROW_T wg_scan_shared[WG_SIZE + 1];

ROW_T vk_workgroup_exclusive_scan(ROW_T x, out ROW_T total) {
  const uint tid = gl_LocalInvocationIndex;
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint lane = gl_SubgroupInvocationID;
  const uint subgroup = gl_SubgroupID;
  const uint subgroups = gl_NumSubgroups;
  const ROW_T exclusive = vk_subgroup_exclusive_scan(x);
  // The last invocation of each subgroup (the workgroup's last one closes a partial subgroup).
  if (lane == gl_SubgroupSize - 1u || tid == WG_SIZE - 1u) wg_scan_shared[subgroup] = vk_row_op(exclusive, x);
  barrier();
  if (subgroup == 0u) {
    const uint run = (subgroups + gl_SubgroupSize - 1u) / gl_SubgroupSize;
    const uint first = lane * run;
    ROW_T acc = vk_row_identity();
    for (uint j = 0u; j < run; ++j)
      if (first + j < subgroups) acc = vk_row_op(acc, wg_scan_shared[first + j]);
    ROW_T prefix = vk_subgroup_exclusive_scan(acc);
    for (uint j = 0u; j < run; ++j) {
      if (first + j < subgroups) {
        const ROW_T t = wg_scan_shared[first + j];
        wg_scan_shared[first + j] = prefix;
        prefix = vk_row_op(prefix, t);
      }
    }
    if (lane == min(gl_SubgroupSize, WG_SIZE) - 1u) wg_scan_shared[WG_SIZE] = prefix;
  }
  barrier();
  total = wg_scan_shared[WG_SIZE];
  const ROW_T result = vk_row_op(wg_scan_shared[subgroup], exclusive);
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

#endif  // VKPRIM_WORKGROUP_SCAN_GLSL
