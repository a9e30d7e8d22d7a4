// Value type of a kernel variant, chosen at build time, and its operator, chosen at pipeline creation.
// Defines (one of): VKPRIM_TYPE_{U32,I32,F32,U64,I64,F64}; VKPRIM_OP (optional). Specialization: VK_OP
// (constant 5).
// VKPRIM_TYPE_USER: an engine's struct and combine function (cmake/VkprimOperators.cmake generates
// vkprim_user_operator.glsl, found on the include path: VALUE_T, VKPRIM_USER_WORDS and, for #if,
// VKPRIM_USER_WORD_COUNT, the same number without its suffix). Its vectors are one value (VEC_N 1, VEC_T an
// array of one, so v[c] reads the same as for the built-in types), its bits an array of u32 words, and
// VKPRIM_ORDERED is defined: the operator need not commute, so every combine keeps left-to-right order.
// Provides: VALUE_T, VEC_T (16 bytes of VALUE_T), VEC_N, vk_op(a, b), vk_identity(), vk_vec_reduce(v),
// VALUE_BITS_T (uint, uvec2 for 64-bit types, uint[VKPRIM_USER_WORDS] for user types) with
// vk_value_bits(v) / vk_bits_value(b).
#ifndef VKPRIM_TYPES_GLSL
#define VKPRIM_TYPES_GLSL

#if defined(VKPRIM_TYPE_U64) || defined(VKPRIM_TYPE_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define VKPRIM_INT64 1
#endif

#if defined(VKPRIM_TYPE_U32)
#define VALUE_T uint
#define VEC_T uvec4
#define VEC_N 4
#define VKPRIM_MAX_VALUE 0xFFFFFFFFu
#define VKPRIM_LOWEST_VALUE 0u
#define VKPRIM_ZERO 0u
#define VKPRIM_ALL_ONES 0xFFFFFFFFu
#elif defined(VKPRIM_TYPE_I32)
#define VALUE_T int
#define VEC_T ivec4
#define VEC_N 4
#define VKPRIM_MAX_VALUE 0x7FFFFFFF
#define VKPRIM_LOWEST_VALUE (-0x7FFFFFFF - 1)
#define VKPRIM_ZERO 0
#define VKPRIM_ALL_ONES (-1)
#elif defined(VKPRIM_TYPE_F32)
#define VALUE_T float
#define VEC_T vec4
#define VEC_N 4
#define VKPRIM_MAX_VALUE uintBitsToFloat(0x7F800000u)
#define VKPRIM_LOWEST_VALUE uintBitsToFloat(0xFF800000u)
#define VKPRIM_ZERO 0.0
#define VKPRIM_FLOAT 1
#elif defined(VKPRIM_TYPE_U64)
#define VALUE_T uint64_t
#define VEC_T u64vec2
#define VEC_N 2
#define VKPRIM_MAX_VALUE 0xFFFFFFFFFFFFFFFFul
#define VKPRIM_LOWEST_VALUE 0ul
#define VKPRIM_ZERO 0ul
#define VKPRIM_ALL_ONES 0xFFFFFFFFFFFFFFFFul
#elif defined(VKPRIM_TYPE_I64)
#define VALUE_T int64_t
#define VEC_T i64vec2
#define VEC_N 2
#define VKPRIM_MAX_VALUE 0x7FFFFFFFFFFFFFFFl
#define VKPRIM_LOWEST_VALUE (-0x7FFFFFFFFFFFFFFFl - 1l)
#define VKPRIM_ZERO 0l
#define VKPRIM_ALL_ONES (-1l)
#elif defined(VKPRIM_TYPE_F64)
#define VALUE_T double
#define VEC_T dvec2
#define VEC_N 2
#define VKPRIM_MAX_VALUE packDouble2x32(uvec2(0u, 0x7FF00000u))
#define VKPRIM_LOWEST_VALUE packDouble2x32(uvec2(0u, 0xFFF00000u))
#define VKPRIM_ZERO 0.0lf
#define VKPRIM_FLOAT 1
#elif defined(VKPRIM_TYPE_USER)
#include "vkprim_user_operator.glsl"
#define VEC_T VALUE_T[1]
#define VEC_N 1
#define VKPRIM_ORDERED 1
#else
#error "define one VKPRIM_TYPE_*"
#endif

#if defined(VKPRIM_TYPE_USER)

VALUE_T vk_op(VALUE_T a, VALUE_T b) { return vk_user_combine(a, b); }
VALUE_T vk_identity() { return vk_user_identity(); }
VALUE_T vk_vec_reduce(VEC_T v) { return v[0]; }
#define VALUE_BITS_T uint[VKPRIM_USER_WORDS]
VALUE_BITS_T vk_value_bits(VALUE_T v) { return vk_user_to_words(v); }
VALUE_T vk_bits_value(VALUE_BITS_T b) { return vk_user_from_words(b); }

// VK_FOR_WORDS(F) expands to F(0) F(1) ... F(VKPRIM_USER_WORD_COUNT - 1): per-word code written out, with
// no loop for the compiler to keep rolled. A rolled loop over the words indexes them through chains of
// selects, and NVIDIA's compiler (580) wraps a shuffle in such a loop in convergence checks (MATCH.ANY and an
// out-of-line call per word): the affine maps' chained scan ran 3.3 times slower so (H100, 2^24).
#define VK_WORDS1(F) F(0)
#define VK_WORDS2(F) VK_WORDS1(F) F(1)
#define VK_WORDS3(F) VK_WORDS2(F) F(2)
#define VK_WORDS4(F) VK_WORDS3(F) F(3)
#define VK_WORDS5(F) VK_WORDS4(F) F(4)
#define VK_WORDS6(F) VK_WORDS5(F) F(5)
#define VK_WORDS7(F) VK_WORDS6(F) F(6)
#define VK_WORDS8(F) VK_WORDS7(F) F(7)
#define VK_WORDS9(F) VK_WORDS8(F) F(8)
#define VK_WORDS10(F) VK_WORDS9(F) F(9)
#define VK_WORDS11(F) VK_WORDS10(F) F(10)
#define VK_WORDS12(F) VK_WORDS11(F) F(11)
#define VK_WORDS13(F) VK_WORDS12(F) F(12)
#define VK_WORDS14(F) VK_WORDS13(F) F(13)
#define VK_WORDS15(F) VK_WORDS14(F) F(14)
#define VK_WORDS16(F) VK_WORDS15(F) F(15)
#define VK_WORDS_CAT(a, b) a##b
#define VK_WORDS_N(n) VK_WORDS_CAT(VK_WORDS, n)
#define VK_FOR_WORDS(F) VK_WORDS_N(VKPRIM_USER_WORD_COUNT)(F)

#else

// The operator is specialization constant 5, so one module serves every operator of a type: the driver
// folds the branches of VK_PICK when the pipeline is created. Values follow vkprim::Op (src/kernel.cpp).
// VKPRIM_OP (0..5) fixes it at build time instead, and VK_PICK then expands to the one operator's code:
// the float types' subgroup variants do so, because NVIDIA's compiler calls its float subgroup scans out
// of line once other operators' scans appear in the module, even behind a constant false condition (a
// chained f32 scan ran 1% slower that way, f64 1.4%).
#define VK_OP_ADD 0u
#define VK_OP_MIN 1u
#define VK_OP_MAX 2u
#define VK_OP_BIT_AND 3u
#define VK_OP_BIT_OR 4u
#define VK_OP_BIT_XOR 5u

// VK_PICK(add, min, max, and, or, xor): returns the argument of the kernel's operator (bitwise operators
// exist for integer types only: the runtime refuses them on floats).
#if defined(VKPRIM_OP)
const uint VK_OP = uint(VKPRIM_OP);
#if VKPRIM_OP == 1
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) return p_min;
#elif VKPRIM_OP == 2
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) return p_max;
#elif VKPRIM_OP == 3
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) return p_and;
#elif VKPRIM_OP == 4
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) return p_or;
#elif VKPRIM_OP == 5
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) return p_xor;
#else
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) return p_add;
#endif
#else
layout(constant_id = 5) const uint VK_OP = 0u;
#if defined(VKPRIM_FLOAT)
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) \
  if (VK_OP == VK_OP_MIN) return p_min;                  \
  if (VK_OP == VK_OP_MAX) return p_max;                  \
  return p_add;
#else
#define VK_PICK(p_add, p_min, p_max, p_and, p_or, p_xor) \
  if (VK_OP == VK_OP_MIN) return p_min;                  \
  if (VK_OP == VK_OP_MAX) return p_max;                  \
  if (VK_OP == VK_OP_BIT_AND) return p_and;              \
  if (VK_OP == VK_OP_BIT_OR) return p_or;                \
  if (VK_OP == VK_OP_BIT_XOR) return p_xor;              \
  return p_add;
#endif
#endif

// The operator on scalars or vectors of VALUE_T.
#define VK_OP_BODY(a, b) VK_PICK(a + b, min(a, b), max(a, b), a & b, a | b, a ^ b)

VALUE_T vk_op(VALUE_T a, VALUE_T b) { VK_OP_BODY(a, b) }

VALUE_T vk_identity() {
  VK_PICK(VKPRIM_ZERO, VKPRIM_MAX_VALUE, VKPRIM_LOWEST_VALUE, VKPRIM_ALL_ONES, VKPRIM_ZERO, VKPRIM_ZERO)
}

// In-order reduction of one 16-byte vector.
VALUE_T vk_vec_reduce(VEC_T v) {
#if VEC_N == 4
  return vk_op(vk_op(v.x, v.y), vk_op(v.z, v.w));
#else
  return vk_op(v.x, v.y);
#endif
}

// A value as raw u32 words and back (tile state, shared words, compaction's raw element moves).
#if VEC_N == 4
#define VALUE_BITS_T uint
VALUE_BITS_T vk_value_bits(VALUE_T v) {
#if defined(VKPRIM_TYPE_F32)
  return floatBitsToUint(v);
#else
  return uint(v);
#endif
}
VALUE_T vk_bits_value(VALUE_BITS_T b) {
#if defined(VKPRIM_TYPE_F32)
  return uintBitsToFloat(b);
#elif defined(VKPRIM_TYPE_I32)
  return int(b);
#else
  return b;
#endif
}
#else
#define VALUE_BITS_T uvec2
VALUE_BITS_T vk_value_bits(VALUE_T v) {
#if defined(VKPRIM_TYPE_U64)
  return unpackUint2x32(v);
#elif defined(VKPRIM_TYPE_I64)
  return unpackUint2x32(uint64_t(v));
#else
  return unpackDouble2x32(v);
#endif
}
VALUE_T vk_bits_value(VALUE_BITS_T b) {
#if defined(VKPRIM_TYPE_U64)
  return packUint2x32(b);
#elif defined(VKPRIM_TYPE_I64)
  return int64_t(packUint2x32(b));
#else
  return packDouble2x32(b);
#endif
}
#endif

#endif  // VKPRIM_TYPE_USER

#endif  // VKPRIM_TYPES_GLSL
