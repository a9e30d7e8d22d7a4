#version 460
// Reduce level, Harris kernel 5 done correctly: two elements per thread while loading, the shared-memory
// tree stops once a subgroup's worth of values remains, and the last steps are one subgroup operation
// (GLSL has no lockstep guarantee, so the warp-synchronous shared-memory trick is not used).
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS (emulation: the tree runs to the end).
// Specialization: WG_SIZE (power of two).
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/pass_io.glsl"
#include "common/subgroup.glsl"

shared VALUE_T tree[WG_SIZE];

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint i = group * (2u * WG_SIZE) + tid;
  tree[tid] = vk_op(vk_load_or_identity(i), vk_load_or_identity(i + WG_SIZE));
  barrier();
  for (uint s = WG_SIZE / 2u; s >= VK_SUBGROUP_SIZE && s > 0u; s >>= 1u) {
    if (tid < s) tree[tid] = vk_op(tree[tid], tree[tid + s]);
    barrier();
  }
  if (VK_SUBGROUP_ID == 0u) {
    const uint remaining = min(WG_SIZE, VK_SUBGROUP_SIZE);
    const VALUE_T total = vk_subgroup_reduce(vk_pick(tid < remaining, tree[tid], vk_identity()));
    if (tid == 0u) out_values[pc.out_offset + group] = total;
  }
}
