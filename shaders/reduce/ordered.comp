#version 460
// Reduce level for operators that need not commute (user operators, VKPRIM_ORDERED): each workgroup
// reduces one tile of WG_SIZE x ITEMS values in order and writes its total; levels repeat until one value
// remains, so the result is the left-to-right combination whatever the operator. A tile is ITEMS rows of
// WG_SIZE consecutive values (row k of invocation tid: value k * WG_SIZE + tid), so every load is
// coalesced; the rows' totals come from ordered workgroup scans (common/workgroup_scan.glsl). Values past
// the count load as the identity. Recorded indirectly (record_indirect), the count and group count come
// from the GPU-computed entry pc.entry.
// Defines: VKPRIM_TYPE_USER, VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS.
// Bindings: common/pass_io.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 2
#include "common/config.glsl"
#include "common/pass_io.glsl"
#include "common/workgroup_scan.glsl"

void main() {
  const uint group = vk_workgroup_index();
  if (group >= vk_pass_groups()) return;
  const uint count = vk_pass_count();
  const uint first = group * (WG_SIZE * ITEMS) + gl_LocalInvocationIndex;
  VEC_T rows[ITEMS];
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint i = first + k * WG_SIZE;
    rows[k][0] = vk_identity();
    if (i < count) rows[k][0] = in_values[pc.in_offset + i];  // not ?: (common/scan_tile.glsl says why)
  }
  const VALUE_T total = vk_workgroup_rows_reduce(rows);
  if (gl_LocalInvocationIndex == 0u) out_values[pc.out_offset + group] = total;
}
