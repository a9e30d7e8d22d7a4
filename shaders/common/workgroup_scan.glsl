// A workgroup scan that folds the subgroup totals in every invocation: an exclusive scan across the
// workgroup of one WS_T per invocation (in invocation order), and the workgroup's total, parameterised by the
// value and its combine, for any chained kernel to instantiate. Instance: common/workgroup_count_scan.glsl
// (stream compaction's packed counts, uvec4 add). Three kernels keep steps of their own, each faster there
// on an H200 (their comments say how much; docs/PERFORMANCE.md): the scan rows rake the totals in subgroup 0
// (common/workgroup_row_scan.glsl), the sort's digit scans and the keyed run summaries fold as here.
//   Subgroups: each subgroup scans its values and the invocation holding its total writes it; after a
//   barrier every invocation folds the totals in order, those of the subgroups before its own into its
//   prefix (two barriers; a handful of broadcast reads: 4 to 16 subgroups on GPUs). No subgroup rakes the
//   totals for the others: a raking loop that writes prefixes back makes Mesa 22.3's lavapipe write nothing
//   under the memory-model pragma. A subgroup larger than the workgroup is partial: its last invocation is
//   the workgroup's last.
//   VKPRIM_NO_SUBGROUPS: Hillis & Steele (1986) over WG_SIZE values, log2(WG_SIZE) steps.
// The including kernel defines, before including this file:
//   WS_T                          the value
//   WS_T ws_op(WS_T a, WS_T b)    a then b (associative; need not commute)
//   WS_T ws_identity()
//   WS_T ws_subgroup_scan(WS_T x, out WS_T inclusive)   (with subgroups) returns the combine of the lanes
//                                 below, in lane order, and sets `inclusive` to that with x; lanes read only
//                                 lanes below them
//   WS_STORAGE (optional)         defined where the kernel keeps the values in its own shared memory: then
//                                 void ws_store(uint i, WS_T x) and WS_T ws_load(uint i), for i below the
//                                 subgroup count (WG_SIZE on the emulation path); else shared ws_shared[WG_SIZE]
// Subgroup s holds invocations s * gl_SubgroupSize onwards, in order. Requires common/config.glsl (WG_SIZE, a
// power of two). Every invocation calls it (it contains barriers); the storage may be reused after it returns.
#ifndef VKPRIM_WORKGROUP_SCAN_GLSL
#define VKPRIM_WORKGROUP_SCAN_GLSL

#include "common/config.glsl"
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#endif

#if !defined(WS_STORAGE)
shared WS_T ws_shared[WG_SIZE];
void ws_store(uint i, WS_T x) { ws_shared[i] = x; }
WS_T ws_load(uint i) { return ws_shared[i]; }
#endif

WS_T vk_workgroup_exclusive_scan(WS_T x, out WS_T total) {
  const uint tid = gl_LocalInvocationIndex;
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint subgroup = gl_SubgroupID;
  WS_T inclusive;
  const WS_T exclusive = ws_subgroup_scan(x, inclusive);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u || tid == WG_SIZE - 1u) ws_store(subgroup, inclusive);
  barrier();
  WS_T before = ws_identity();
  total = ws_identity();
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    const WS_T t = ws_load(s);
    before = ws_op(before, s < subgroup ? t : ws_identity());
    total = ws_op(total, t);
  }
  barrier();
  return ws_op(before, exclusive);
#else
  ws_store(tid, x);
  barrier();
  for (uint d = 1u; d < WG_SIZE; d <<= 1u) {
    const WS_T v = tid >= d ? ws_op(ws_load(tid - d), ws_load(tid)) : ws_load(tid);
    barrier();
    ws_store(tid, v);
    barrier();
  }
  total = ws_load(WG_SIZE - 1u);
  const WS_T result = tid > 0u ? ws_load(tid - 1u) : ws_identity();
  barrier();
  return result;
#endif
}

#endif  // VKPRIM_WORKGROUP_SCAN_GLSL
