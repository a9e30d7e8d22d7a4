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

#if !defined(VKPRIM_NO_SUBGROUPS)

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
