#version 460
// Reduce level, Harris kernel 3: sequential addressing, stride halves from WG_SIZE/2, tid < s combines
// (conflict-free). One element per thread.
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
  for (uint s = WG_SIZE / 2u; s > 0u; s >>= 1u) {
    if (tid < s) tree[tid] = vk_op(tree[tid], tree[tid + s]);
    barrier();
  }
  if (tid == 0u) out_values[pc.out_offset + group] = tree[0];
}
