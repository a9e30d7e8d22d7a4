#version 460
// Copy ceiling: every thread copies ITEMS 16-byte vectors (one tile of WG_SIZE * ITEMS per workgroup).
// The reference throughput against which scans are reported; not a primitive.
// Specialization: WG_SIZE, ITEMS. Push: vector count, group count, rotation: vector i goes to (i + rotation)
// mod count, so that the copy can be timed with its reads and writes at two distances apart.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"

layout(push_constant) uniform Constants { uint vector_count; uint group_count; uint rotation; } pc;
layout(set = 0, binding = 0, std430) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uvec4 dst[]; };

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint base = group * WG_SIZE * ITEMS + gl_LocalInvocationIndex;
  uvec4 loaded[ITEMS];
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint i = base + k * WG_SIZE;
    if (i < pc.vector_count) loaded[k] = src[i];
  }
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint i = base + k * WG_SIZE;
    const uint j = i + pc.rotation;
    if (i < pc.vector_count) dst[j >= pc.vector_count ? j - pc.vector_count : j] = loaded[k];
  }
}
