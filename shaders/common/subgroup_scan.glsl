// Subgroup scans of ROW_T values (componentwise): subgroupInclusive/Exclusive{Add,Min,Max,And,Or,Xor},
// or (VKPRIM_NO_SUBGROUPS) the emulation of common/subgroup.glsl, in which a subgroup is one
// invocation: the inclusive scan is the value itself and the exclusive scan the identity.
// Subgroup-size agnostic. Defines: VKPRIM_TYPE_*, VKPRIM_OP_*, VKPRIM_NO_SUBGROUPS.
// Provides: vk_subgroup_inclusive_scan(ROW_T), vk_subgroup_exclusive_scan(ROW_T), vk_subgroup_row_reduce(ROW_T).
#ifndef VKPRIM_SUBGROUP_SCAN_GLSL
#define VKPRIM_SUBGROUP_SCAN_GLSL

#include "common/subgroup.glsl"
#include "common/scan_types.glsl"

#if !defined(VKPRIM_NO_SUBGROUPS)

#if defined(VKPRIM_OP_ADD)
#define VKPRIM_SUBGROUP_INCLUSIVE subgroupInclusiveAdd
#define VKPRIM_SUBGROUP_EXCLUSIVE subgroupExclusiveAdd
#define VKPRIM_SUBGROUP_REDUCE subgroupAdd
#elif defined(VKPRIM_OP_MIN)
#define VKPRIM_SUBGROUP_INCLUSIVE subgroupInclusiveMin
#define VKPRIM_SUBGROUP_EXCLUSIVE subgroupExclusiveMin
#define VKPRIM_SUBGROUP_REDUCE subgroupMin
#elif defined(VKPRIM_OP_MAX)
#define VKPRIM_SUBGROUP_INCLUSIVE subgroupInclusiveMax
#define VKPRIM_SUBGROUP_EXCLUSIVE subgroupExclusiveMax
#define VKPRIM_SUBGROUP_REDUCE subgroupMax
#elif defined(VKPRIM_OP_BIT_AND)
#define VKPRIM_SUBGROUP_INCLUSIVE subgroupInclusiveAnd
#define VKPRIM_SUBGROUP_EXCLUSIVE subgroupExclusiveAnd
#define VKPRIM_SUBGROUP_REDUCE subgroupAnd
#elif defined(VKPRIM_OP_BIT_OR)
#define VKPRIM_SUBGROUP_INCLUSIVE subgroupInclusiveOr
#define VKPRIM_SUBGROUP_EXCLUSIVE subgroupExclusiveOr
#define VKPRIM_SUBGROUP_REDUCE subgroupOr
#else
#define VKPRIM_SUBGROUP_INCLUSIVE subgroupInclusiveXor
#define VKPRIM_SUBGROUP_EXCLUSIVE subgroupExclusiveXor
#define VKPRIM_SUBGROUP_REDUCE subgroupXor
#endif

ROW_T vk_subgroup_inclusive_scan(ROW_T x) { return VKPRIM_SUBGROUP_INCLUSIVE(x); }
ROW_T vk_subgroup_exclusive_scan(ROW_T x) { return VKPRIM_SUBGROUP_EXCLUSIVE(x); }
ROW_T vk_subgroup_row_reduce(ROW_T x) { return VKPRIM_SUBGROUP_REDUCE(x); }

#else  // emulation: a subgroup is one invocation

ROW_T vk_subgroup_inclusive_scan(ROW_T x) { return x; }
ROW_T vk_subgroup_exclusive_scan(ROW_T x) { return vk_row_identity(); }
ROW_T vk_subgroup_row_reduce(ROW_T x) { return x; }

#endif

#endif  // VKPRIM_SUBGROUP_SCAN_GLSL
