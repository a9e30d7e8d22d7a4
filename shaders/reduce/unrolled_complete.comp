#version 460
// Reduce level, Harris kernel 6: as unrolled_subgroup, with every tree step written out against the
// specialization constant WG_SIZE, so the driver folds the dead steps and unrolls the rest.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two, <= 1024).
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/pass_io.glsl"
#include "common/subgroup.glsl"

shared VALUE_T tree[WG_SIZE];

// One tree step of stride s; the condition is uniform (a constant and the subgroup size).
#define TREE_STEP(s)                                                  \
  if (WG_SIZE > (s) && (s) >= VK_SUBGROUP_SIZE) {                     \
    if (tid < (s)) tree[tid] = vk_op(tree[tid], tree[tid + (s)]);     \
    barrier();                                                        \
  }

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint i = group * (2u * WG_SIZE) + tid;
  tree[tid] = vk_op(vk_load_or_identity(i), vk_load_or_identity(i + WG_SIZE));
  barrier();
  TREE_STEP(512u) TREE_STEP(256u) TREE_STEP(128u) TREE_STEP(64u) TREE_STEP(32u)
  TREE_STEP(16u) TREE_STEP(8u) TREE_STEP(4u) TREE_STEP(2u) TREE_STEP(1u)
  if (VK_SUBGROUP_ID == 0u) {
    const uint remaining = min(WG_SIZE, VK_SUBGROUP_SIZE);
    const VALUE_T total = vk_subgroup_reduce(vk_pick(tid < remaining, tree[tid], vk_identity()));
    if (tid == 0u) out_values[pc.out_offset + group] = total;
  }
}
