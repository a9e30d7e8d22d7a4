#version 460
// Reduce level, Harris kernel 2: interleaved addressing with a strided index (index = 2*s*tid), no
// modulo and less divergence, but shared-memory bank conflicts. One element per thread.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE (power of two).
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/pass_io.glsl"

shared VALUE_T tree[WG_SIZE];

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  tree[tid] = vk_load_or_identity(group * WG_SIZE + tid);
  barrier();
  for (uint s = 1u; s < WG_SIZE; s *= 2u) {
    const uint index = 2u * s * tid;
    if (index < WG_SIZE) tree[index] = vk_op(tree[index], tree[index + s]);
    barrier();
  }
  if (tid == 0u) out_values[pc.out_offset + group] = tree[0];
}
