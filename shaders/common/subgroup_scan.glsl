// Subgroup scans of ROW_T values (componentwise): subgroupInclusive/Exclusive{Add,Min,Max,And,Or,Xor},
// or (VKPRIM_NO_SUBGROUPS) the emulation of common/subgroup.glsl, in which a subgroup is one
// invocation: the inclusive scan is the value itself and the exclusive scan the identity.
// Subgroup-size agnostic. Defines: VKPRIM_TYPE_*, VKPRIM_NO_SUBGROUPS; the operator: VK_PICK
// (common/types.glsl).
// Provides: vk_subgroup_inclusive_scan(ROW_T), vk_subgroup_exclusive_scan(ROW_T), vk_subgroup_row_reduce(ROW_T).
#ifndef VKPRIM_SUBGROUP_SCAN_GLSL
#define VKPRIM_SUBGROUP_SCAN_GLSL

#include "common/subgroup.glsl"
#include "common/scan_types.glsl"

#if !defined(VKPRIM_NO_SUBGROUPS) && defined(VKPRIM_TYPE_USER)

// User types: Hillis & Steele over shuffles up, so lanes only read the lanes below them (safe in a partial
// subgroup) and each combine keeps lane order.
ROW_T vk_subgroup_inclusive_scan(ROW_T x) {
  const uint lane = gl_SubgroupInvocationID;
  for (uint d = 1u; d < gl_SubgroupSize; d <<= 1u) {
    for (uint k = 0u; k < ROW_N; ++k) {
      const VALUE_T o = vk_shuffle_up(x[k], d);
      x[k] = vk_pick(lane >= d, vk_op(o, x[k]), x[k]);
    }
  }
  return x;
}
ROW_T vk_subgroup_exclusive_scan(ROW_T x) {
  ROW_T shifted;
  for (uint k = 0u; k < ROW_N; ++k) shifted[k] = vk_shuffle_up(x[k], 1u);
  if (gl_SubgroupInvocationID == 0u) shifted = vk_row_identity();
  return vk_subgroup_inclusive_scan(shifted);
}
ROW_T vk_subgroup_row_reduce(ROW_T x) {
  for (uint k = 0u; k < ROW_N; ++k) x[k] = vk_subgroup_reduce(x[k]);
  return x;
}

#elif !defined(VKPRIM_NO_SUBGROUPS)

ROW_T vk_subgroup_inclusive_scan(ROW_T x) {
  VK_PICK(subgroupInclusiveAdd(x), subgroupInclusiveMin(x), subgroupInclusiveMax(x), subgroupInclusiveAnd(x),
          subgroupInclusiveOr(x), subgroupInclusiveXor(x))
}
ROW_T vk_subgroup_exclusive_scan(ROW_T x) {
  VK_PICK(subgroupExclusiveAdd(x), subgroupExclusiveMin(x), subgroupExclusiveMax(x), subgroupExclusiveAnd(x),
          subgroupExclusiveOr(x), subgroupExclusiveXor(x))
}
ROW_T vk_subgroup_row_reduce(ROW_T x) {
  VK_PICK(subgroupAdd(x), subgroupMin(x), subgroupMax(x), subgroupAnd(x), subgroupOr(x), subgroupXor(x))
}

#else  // emulation: a subgroup is one invocation

ROW_T vk_subgroup_inclusive_scan(ROW_T x) { return x; }
ROW_T vk_subgroup_exclusive_scan(ROW_T x) { return vk_row_identity(); }
ROW_T vk_subgroup_row_reduce(ROW_T x) { return x; }

#endif

#endif  // VKPRIM_SUBGROUP_SCAN_GLSL
