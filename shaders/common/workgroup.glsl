// Workgroup layer: reductions across the workgroup over one shared array of WG_SIZE values.
// Requires common/config.glsl (WG_SIZE, a power of two) and common/subgroup.glsl.
// vk_workgroup_reduce(x): every invocation calls it (it contains barriers); the result is valid in
// invocation 0 (and in all of subgroup 0; VKPRIM_ORDERED: in every invocation, combined in invocation
// order). wg_shared may be reused after it returns.
#ifndef VKPRIM_WORKGROUP_GLSL
#define VKPRIM_WORKGROUP_GLSL

#include "common/config.glsl"
#include "common/subgroup.glsl"

shared VALUE_T wg_shared[WG_SIZE];

#if defined(VKPRIM_ORDERED)
// Operators that need not commute (user types): the subgroups reduce in lane order, then the partials
// combine pairwise in index order (interleaved addressing: partial i with i + s, s = 1, 2, 4, ...).
VALUE_T vk_workgroup_reduce(VALUE_T x) {
  const uint tid = gl_LocalInvocationIndex;
  const VALUE_T partial = vk_subgroup_reduce(x);
  if (VK_SUBGROUP_LANE == 0u) wg_shared[VK_SUBGROUP_ID] = partial;
  barrier();
  const uint partials = VK_NUM_SUBGROUPS;
  for (uint s = 1u; s < partials; s <<= 1u) {
    if (tid % (2u * s) == 0u && tid + s < partials) wg_shared[tid] = vk_op(wg_shared[tid], wg_shared[tid + s]);
    barrier();
  }
  const VALUE_T result = wg_shared[0];
  barrier();
  return result;
}
#else

VALUE_T vk_workgroup_reduce(VALUE_T x) {
  const uint tid = gl_LocalInvocationIndex;
  VALUE_T partial = vk_subgroup_reduce(x);
  if (VK_SUBGROUP_LANE == 0u) wg_shared[VK_SUBGROUP_ID] = partial;
  barrier();
  // Tree over the per-subgroup partials, down to what one subgroup finishes.
  const uint partials = VK_NUM_SUBGROUPS;
  for (uint s = partials / 2u; s >= VK_SUBGROUP_SIZE && s > 0u; s >>= 1u) {
    if (tid < s) wg_shared[tid] = vk_op(wg_shared[tid], wg_shared[tid + s]);
    barrier();
  }
  VALUE_T result = vk_identity();
  if (VK_SUBGROUP_ID == 0u) {
    const uint remaining = min(partials, VK_SUBGROUP_SIZE);
    result = vk_subgroup_reduce(vk_pick(tid < remaining, wg_shared[tid], vk_identity()));
  }
  barrier();
  return result;
}
#endif  // VKPRIM_ORDERED

#endif  // VKPRIM_WORKGROUP_GLSL
