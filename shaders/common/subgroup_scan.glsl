// Subgroup scans of ROW_T values (componentwise): subgroupInclusive/Exclusive{Add,Min,Max,And,Or,Xor},
// or (VKPRIM_NO_SUBGROUPS) the emulation of common/subgroup.glsl, in which a subgroup is one
// invocation: the inclusive scan is the value itself and the exclusive scan the identity.
// Subgroup-size agnostic. Defines: VKPRIM_TYPE_*, VKPRIM_NO_SUBGROUPS. Specialization: VK_OP.
// Provides: vk_subgroup_inclusive_scan(ROW_T), vk_subgroup_exclusive_scan(ROW_T), vk_subgroup_row_reduce(ROW_T).
#ifndef VKPRIM_SUBGROUP_SCAN_GLSL
#define VKPRIM_SUBGROUP_SCAN_GLSL

#include "common/subgroup.glsl"
#include "common/scan_types.glsl"

#if !defined(VKPRIM_NO_SUBGROUPS)

// VK_SUBGROUP_OP(add, min, max, and, or, xor, x): the call among the six for the kernel's operator.
#if defined(VKPRIM_FLOAT)
#define VK_SUBGROUP_OP(add, min, max, and, or, xor, x) \
  if (VK_OP == VK_OP_MIN) return min(x);               \
  if (VK_OP == VK_OP_MAX) return max(x);               \
  return add(x);
#else
#define VK_SUBGROUP_OP(add, min, max, and, or, xor, x) \
  if (VK_OP == VK_OP_MIN) return min(x);               \
  if (VK_OP == VK_OP_MAX) return max(x);               \
  if (VK_OP == VK_OP_BIT_AND) return and(x);           \
  if (VK_OP == VK_OP_BIT_OR) return or(x);             \
  if (VK_OP == VK_OP_BIT_XOR) return xor(x);           \
  return add(x);
#endif

ROW_T vk_subgroup_inclusive_scan(ROW_T x) {
  VK_SUBGROUP_OP(subgroupInclusiveAdd, subgroupInclusiveMin, subgroupInclusiveMax, subgroupInclusiveAnd,
                 subgroupInclusiveOr, subgroupInclusiveXor, x)
}
ROW_T vk_subgroup_exclusive_scan(ROW_T x) {
  VK_SUBGROUP_OP(subgroupExclusiveAdd, subgroupExclusiveMin, subgroupExclusiveMax, subgroupExclusiveAnd,
                 subgroupExclusiveOr, subgroupExclusiveXor, x)
}
ROW_T vk_subgroup_row_reduce(ROW_T x) {
  VK_SUBGROUP_OP(subgroupAdd, subgroupMin, subgroupMax, subgroupAnd, subgroupOr, subgroupXor, x)
}

#else  // emulation: a subgroup is one invocation

ROW_T vk_subgroup_inclusive_scan(ROW_T x) { return x; }
ROW_T vk_subgroup_exclusive_scan(ROW_T x) { return vk_row_identity(); }
ROW_T vk_subgroup_row_reduce(ROW_T x) { return x; }

#endif

#endif  // VKPRIM_SUBGROUP_SCAN_GLSL
