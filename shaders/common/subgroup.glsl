// Subgroup layer: real subgroup operations, or (VKPRIM_NO_SUBGROUPS) an emulation in which every
// invocation is its own subgroup of size 1, so workgroup code built on this layer degrades to pure
// shared-memory trees with identical results.
// Provides: VK_SUBGROUP_SIZE, VK_SUBGROUP_ID, VK_SUBGROUP_LANE, VK_NUM_SUBGROUPS, vk_subgroup_reduce(x),
// vk_pick(c, a, b);
// for user types (no subgroup arithmetic on structs: shuffles of their words) also vk_shuffle_up(x, d),
// vk_shuffle_xor(x, mask),
// vk_subgroup_reduce_reversed(x) (the last lane's value leftmost), and vk_subgroup_reduce keeps lane order.
#ifndef VKPRIM_SUBGROUP_GLSL
#define VKPRIM_SUBGROUP_GLSL

#include "common/types.glsl"

// vk_pick(c, a, b): c ? a : b without a branch. glslang branches on ?: unless both operands are variables
// or constants, and lanes that branch apart before a subgroup operation in code that only part of the
// workgroup runs need not meet again (docs/ALGORITHMS.md, "Reconvergence"). User values: selects of words,
// at every value size (a branch also put the next shuffle behind NVIDIA's convergence checks: H100, against
// `if (c) x = combined`, Welford, affine and boxes scans 1-4% faster, Mat4's reduce_then_scan 8% and its
// chained scan 4% at 2^24).
#if defined(VKPRIM_TYPE_USER)
VALUE_T vk_pick(bool c, VALUE_T if_true, VALUE_T if_false) {
  const VALUE_BITS_T t = vk_value_bits(if_true);
  VALUE_BITS_T f = vk_value_bits(if_false);
#define VK_WORD_(k) f[k] = mix(f[k], t[k], c);
  VK_FOR_WORDS(VK_WORD_)
#undef VK_WORD_
  return vk_bits_value(f);
}
#else
VALUE_T vk_pick(bool c, VALUE_T if_true, VALUE_T if_false) { return c ? if_true : if_false; }
#endif

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

#if defined(VKPRIM_TYPE_USER)
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require

VALUE_T vk_shuffle_up(VALUE_T x, uint d) {
  VALUE_BITS_T b = vk_value_bits(x);
#define VK_WORD_(k) b[k] = subgroupShuffleUp(b[k], d);
  VK_FOR_WORDS(VK_WORD_)
#undef VK_WORD_
  return vk_bits_value(b);
}
VALUE_T vk_shuffle_down(VALUE_T x, uint d) {
  VALUE_BITS_T b = vk_value_bits(x);
#define VK_WORD_(k) b[k] = subgroupShuffleDown(b[k], d);
  VK_FOR_WORDS(VK_WORD_)
#undef VK_WORD_
  return vk_bits_value(b);
}
VALUE_T vk_shuffle_xor(VALUE_T x, uint mask) {
  VALUE_BITS_T b = vk_value_bits(x);
#define VK_WORD_(k) b[k] = subgroupShuffleXor(b[k], mask);
  VK_FOR_WORDS(VK_WORD_)
#undef VK_WORD_
  return vk_bits_value(b);
}
VALUE_T vk_shuffle_index(VALUE_T x, uint lane) {
  VALUE_BITS_T b = vk_value_bits(x);
#define VK_WORD_(k) b[k] = subgroupShuffle(b[k], lane);
  VK_FOR_WORDS(VK_WORD_)
#undef VK_WORD_
  return vk_bits_value(b);
}
VALUE_T vk_shuffle_first(VALUE_T x) {
  VALUE_BITS_T b = vk_value_bits(x);
#define VK_WORD_(k) b[k] = subgroupShuffle(b[k], 0u);
  VK_FOR_WORDS(VK_WORD_)
#undef VK_WORD_
  return vk_bits_value(b);
}
// Lanes that hold invocations: a subgroup larger than the workgroup is partial, and a shuffle from a lane
// past them reads nothing defined.
uint vk_subgroup_lanes() { return min(gl_SubgroupSize, gl_WorkGroupSize.x); }

// Suffix scans over shuffles down (Hillis & Steele): lane i ends with its lanes i.. combined, so lane 0
// holds the whole subgroup, in lane order or reversed, and hands it to every lane. Two functions, not one
// with a constant flag choosing the order: that one measured 18% slower in reduce_then_scan and 2.5x in
// the chained scan's look-back on an H100 (vec4 sum, 2^26), its combine evaluated both ways.
VALUE_T vk_subgroup_reduce(VALUE_T x) {
  const uint lanes = vk_subgroup_lanes();
  for (uint d = 1u; d < lanes; d <<= 1u) {
    const VALUE_T o = vk_shuffle_down(x, d);
    x = vk_pick(gl_SubgroupInvocationID + d < lanes, vk_op(x, o), x);
  }
  return vk_shuffle_first(x);
}
VALUE_T vk_subgroup_reduce_reversed(VALUE_T x) {
  const uint lanes = vk_subgroup_lanes();
  for (uint d = 1u; d < lanes; d <<= 1u) {
    const VALUE_T o = vk_shuffle_down(x, d);
    x = vk_pick(gl_SubgroupInvocationID + d < lanes, vk_op(o, x), x);
  }
  return vk_shuffle_first(x);
}
#else
VALUE_T vk_subgroup_reduce(VALUE_T x) {
  VK_PICK(subgroupAdd(x), subgroupMin(x), subgroupMax(x), subgroupAnd(x), subgroupOr(x), subgroupXor(x))
}
#endif

#else  // emulation: a subgroup is one invocation

#define VK_SUBGROUP_SIZE 1u
#define VK_SUBGROUP_ID gl_LocalInvocationIndex
#define VK_SUBGROUP_LANE 0u
#define VK_NUM_SUBGROUPS gl_WorkGroupSize.x

VALUE_T vk_subgroup_reduce(VALUE_T x) { return x; }
#if defined(VKPRIM_TYPE_USER)
VALUE_T vk_subgroup_reduce_reversed(VALUE_T x) { return x; }
#endif

#endif

#endif  // VKPRIM_SUBGROUP_GLSL
