// Subgroup layer: real subgroup operations, or (VKPRIM_NO_SUBGROUPS) an emulation in which every
// invocation is its own subgroup of size 1, so workgroup code built on this layer degrades to pure
// shared-memory trees with identical results.
// Provides: VK_SUBGROUP_SIZE, VK_SUBGROUP_ID, VK_SUBGROUP_LANE, VK_NUM_SUBGROUPS, vk_subgroup_reduce(x).
#ifndef VKPRIM_SUBGROUP_GLSL
#define VKPRIM_SUBGROUP_GLSL

#include "common/types.glsl"

#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#if defined(VKPRIM_INT64)
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#endif

#define VK_SUBGROUP_SIZE gl_SubgroupSize
#define VK_SUBGROUP_ID gl_SubgroupID
#define VK_SUBGROUP_LANE gl_SubgroupInvocationID
#define VK_NUM_SUBGROUPS gl_NumSubgroups

VALUE_T vk_subgroup_reduce(VALUE_T x) {
  VK_PICK(subgroupAdd(x), subgroupMin(x), subgroupMax(x), subgroupAnd(x), subgroupOr(x), subgroupXor(x))
}

#else  // emulation: a subgroup is one invocation

#define VK_SUBGROUP_SIZE 1u
#define VK_SUBGROUP_ID gl_LocalInvocationIndex
#define VK_SUBGROUP_LANE 0u
#define VK_NUM_SUBGROUPS gl_WorkGroupSize.x

VALUE_T vk_subgroup_reduce(VALUE_T x) { return x; }

#endif

#endif  // VKPRIM_SUBGROUP_GLSL
