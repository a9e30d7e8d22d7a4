#version 460
// Read ceiling: every thread reads ITEMS 16-byte vectors and folds them with xor; a workgroup writes
// only when the fold equals a sentinel pushed by the host, so the loads cannot be optimized away and the
// store almost never happens. Not a primitive.
// Specialization: WG_SIZE, ITEMS. Push: vector count, group count, sentinel.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"

layout(push_constant) uniform Constants { uint vector_count; uint group_count; uint sentinel; } pc;
layout(set = 0, binding = 0, std430) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint base = group * WG_SIZE * ITEMS + gl_LocalInvocationIndex;
  uvec4 acc = uvec4(0u);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint i = base + k * WG_SIZE;
    if (i < pc.vector_count) acc ^= src[i];
  }
  const uint folded = acc.x ^ acc.y ^ acc.z ^ acc.w;
  if (folded == pc.sentinel) dst[gl_LocalInvocationIndex] = folded;
}
