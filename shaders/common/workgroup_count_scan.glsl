// The workgroup scan (common/workgroup_scan.glsl) of one uvec4 of counts per invocation, componentwise
// add, independent of the kernel's value type (stream compaction packs per-row counts into 16-bit fields
// of the components, common/select_tile.glsl).
// Requires common/config.glsl.
#ifndef VKPRIM_WORKGROUP_COUNT_SCAN_GLSL
#define VKPRIM_WORKGROUP_COUNT_SCAN_GLSL

#include "common/config.glsl"
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#define WS_T uvec4
uvec4 ws_op(uvec4 a, uvec4 b) { return a + b; }
uvec4 ws_identity() { return uvec4(0u); }
#if !defined(VKPRIM_NO_SUBGROUPS)
uvec4 ws_subgroup_scan(uvec4 x, out uvec4 inclusive) {
  inclusive = subgroupInclusiveAdd(x);
  return inclusive - x;
}
#endif
#include "common/workgroup_scan.glsl"

#endif  // VKPRIM_WORKGROUP_COUNT_SCAN_GLSL
