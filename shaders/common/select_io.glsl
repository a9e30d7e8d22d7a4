// Bindings, push constants, element access and predicates of the stream-compaction kernels
// (shaders/select/*.comp: Select and Partition share every kernel).
//   set 0 binding 0: input  (u32 words, and uvec4 for 16-byte loads), element shift = SELECT_SHIFT(0)
//   set 0 binding 1: flags  (u32 per element, also as uvec2/uvec4), shift SELECT_SHIFT(8); only read under
//                    the flagged predicate
//   set 0 binding 2: scratch: tile state (common/tile_state.glsl), tile counts, or rejected elements at
//                    word pc.spill_word
//   set 0 binding 3: output (u32 words), shift SELECT_SHIFT(16)
//   set 0 binding 4: selected_count (u32 words), shift SELECT_SHIFT(24)
//   set 0 binding 5: record_indirect's args region (common/indirect.glsl)
// Elements move as raw bits (one or two u32 words), never through float registers, so NaN payloads and
// -0.0 are copied exactly; only the predicate looks at values.
// Requires common/types.glsl (VKPRIM_TYPE_*). Provides BITS_T, ELEM_WORDS, vk_select_count(),
// vk_select_keep(bits, flag), vk_select_load_vector / vk_select_load_element / vk_select_load_flags.
#ifndef VKPRIM_SELECT_IO_GLSL
#define VKPRIM_SELECT_IO_GLSL

#include "common/types.glsl"

layout(push_constant) uniform SelectConstants {
  uint count;         // elements (direct dispatch); record_indirect reads the entry instead
  uint shifts;        // element shifts: input | flags << 8 | output << 16 | selected_count << 24
  uint spill_word;    // chained Partition: word offset of the rejected elements within binding 2
  uint knobs;         // chained: fallback spin limit | forced-skip period << 16 | no statistics << 31
  uint mode;          // predicate (bits 0..2) | SELECT_* bits
  uint comparand_lo;  // the comparand's bits (low word)
  uint comparand_hi;  // high word (64-bit types)
  uint entry;         // indirect entry of this pass
} pc;

#define SELECT_PARTITION 8u        // keep the rejected elements too (after the selected ones)
#define SELECT_IN_VECTORS 16u      // input shift is a multiple of VEC_N: 16-byte loads allowed
#define SELECT_FLAG_VECTORS 32u    // flags shift is a multiple of VEC_N: 8/16-byte flag loads allowed
#define SELECT_INDIRECT 64u        // the element count is vk_indirect_count(pc.entry)
#define SELECT_INDICES 128u        // output (and Partition's spill) holds the elements' u32 input positions
#define SELECT_REVERSED 256u       // Partition (count_scan_scatter): the rejected elements in reverse order

#define PRED_FLAGGED 0u
#define PRED_LESS 1u
#define PRED_LESS_EQUAL 2u
#define PRED_GREATER 3u
#define PRED_GREATER_EQUAL 4u
#define PRED_EQUAL 5u
#define PRED_NOT_EQUAL 6u

#define VKPRIM_INDIRECT_BINDING 5
#include "common/indirect.glsl"

layout(set = 0, binding = 0, std430) readonly buffer SelectInWords { uint in_words[]; };
layout(set = 0, binding = 0, std430) readonly buffer SelectInVectors { uvec4 in_vectors[]; };
layout(set = 0, binding = 1, std430) readonly buffer SelectFlagWords { uint flag_words[]; };
layout(set = 0, binding = 1, std430) readonly buffer SelectFlagPairs { uvec2 flag_pairs[]; };
layout(set = 0, binding = 1, std430) readonly buffer SelectFlagQuads { uvec4 flag_quads[]; };
layout(set = 0, binding = 2, std430) buffer SelectScratchWords { uint scratch_words[]; };
layout(set = 0, binding = 3, std430) writeonly buffer SelectOutWords { uint out_words[]; };
layout(set = 0, binding = 4, std430) writeonly buffer SelectCountWords { uint selected_count_words[]; };

uint vk_select_shift(uint which) { return (pc.shifts >> which) & 0xFFu; }
#define SHIFT_IN 0u
#define SHIFT_FLAGS 8u
#define SHIFT_OUT 16u
#define SHIFT_COUNT 24u
bool vk_select_mode(uint bit) { return (pc.mode & bit) != 0u; }
uint vk_select_predicate() { return pc.mode & 7u; }

// Whether the kernels read the input at all: flagged selection of indices needs only the flags.
bool vk_select_reads_input() { return !(vk_select_predicate() == PRED_FLAGGED && vk_select_mode(SELECT_INDICES)); }

// The element count of this pass, read once at the top of every kernel.
uint vk_select_count() { return vk_select_mode(SELECT_INDIRECT) ? vk_indirect_count(pc.entry) : pc.count; }

// An element as raw words (common/types.glsl: uint, or uvec2 for 64-bit types).
#define BITS_T VALUE_BITS_T
#if VEC_N == 4
#define ELEM_WORDS 1u
#else
#define ELEM_WORDS 2u
#endif

// Element c of a 16-byte vector.
BITS_T vk_vector_element(uvec4 v, uint c) {
#if VEC_N == 4
  return v[c];
#else
  return c == 0u ? v.xy : v.zw;
#endif
}

BITS_T vk_select_load_element(uint e) {
  const uint w = (vk_select_shift(SHIFT_IN) + e) * ELEM_WORDS;
#if VEC_N == 4
  return in_words[w];
#else
  return uvec2(in_words[w], in_words[w + 1u]);
#endif
}

// Vector v of the input (elements v * VEC_N ...); elements at or past n read as 0 (never kept).
uvec4 vk_select_load_vector(uint v, uint n) {
  const uint e = v * VEC_N;
  if (e + VEC_N <= n && vk_select_mode(SELECT_IN_VECTORS))
    return in_vectors[vk_select_shift(SHIFT_IN) * ELEM_WORDS / 4u + v];
  uvec4 r = uvec4(0u);
  [[unroll]] for (uint c = 0u; c < VEC_N; ++c) {
    if (e + c < n) {
#if VEC_N == 4
      r[c] = vk_select_load_element(e + c);
#else
      const uvec2 b = vk_select_load_element(e + c);
      r[2u * c] = b.x;
      r[2u * c + 1u] = b.y;
#endif
    }
  }
  return r;
}

// The flags of vector v's elements (0 past n).
uvec4 vk_select_load_flags(uint v, uint n) {
  const uint e = v * VEC_N;
  const uint shift = vk_select_shift(SHIFT_FLAGS);
  if (e + VEC_N <= n && vk_select_mode(SELECT_FLAG_VECTORS)) {
#if VEC_N == 4
    return flag_quads[shift / 4u + v];
#else
    return uvec4(flag_pairs[shift / 2u + v], 0u, 0u);
#endif
  }
  uvec4 r = uvec4(0u);
  [[unroll]] for (uint c = 0u; c < VEC_N; ++c)
    if (e + c < n) r[c] = flag_words[shift + e + c];
  return r;
}

// The first word of an element's bits (an index staged as BITS_T).
uint vk_first_word(BITS_T bits) {
#if VEC_N == 4
  return bits;
#else
  return bits.x;
#endif
}

// Indices mode stages an element's input position in place of its bits.
BITS_T vk_index_bits(uint index) {
#if VEC_N == 4
  return index;
#else
  return uvec2(index, 0u);
#endif
}

void vk_select_store_output(uint index, BITS_T bits) {
  if (vk_select_mode(SELECT_INDICES)) {
    out_words[vk_select_shift(SHIFT_OUT) + index] = vk_first_word(bits);
    return;
  }
  const uint w = (vk_select_shift(SHIFT_OUT) + index) * ELEM_WORDS;
#if VEC_N == 4
  out_words[w] = bits;
#else
  out_words[w] = bits.x;
  out_words[w + 1u] = bits.y;
#endif
}

void vk_select_store_spill(uint index, BITS_T bits) {
  if (vk_select_mode(SELECT_INDICES)) {
    scratch_words[pc.spill_word + index] = vk_first_word(bits);
    return;
  }
  const uint w = pc.spill_word + index * ELEM_WORDS;
#if VEC_N == 4
  scratch_words[w] = bits;
#else
  scratch_words[w] = bits.x;
  scratch_words[w + 1u] = bits.y;
#endif
}

void vk_select_write_count(uint k) { selected_count_words[vk_select_shift(SHIFT_COUNT)] = k; }

// The NaN test on the bits (robust against compilers that assume no NaN in float compares); the value
// itself comes from vk_bits_value (common/types.glsl).
bool vk_select_is_nan(BITS_T b) {
#if defined(VKPRIM_TYPE_F32)
  return (b & 0x7FFFFFFFu) > 0x7F800000u;
#elif defined(VKPRIM_TYPE_F64)
  const uint high = b.y & 0x7FFFFFFFu;
  return high > 0x7FF00000u || (high == 0x7FF00000u && b.x != 0u);
#else
  return false;
#endif
}

BITS_T vk_select_comparand_bits() {
#if VEC_N == 4
  return pc.comparand_lo;
#else
  return uvec2(pc.comparand_lo, pc.comparand_hi);
#endif
}

// Does the predicate keep this element? flagged: flag != 0; otherwise element <pred> comparand, IEEE for
// floats (with a NaN on either side only not_equal holds; -0.0 == +0.0).
bool vk_select_keep(BITS_T bits, uint flag) {
  const uint predicate = vk_select_predicate();
  if (predicate == PRED_FLAGGED) return flag != 0u;
  const BITS_T rhs_bits = vk_select_comparand_bits();
  if (vk_select_is_nan(bits) || vk_select_is_nan(rhs_bits)) return predicate == PRED_NOT_EQUAL;
  const VALUE_T a = vk_bits_value(bits);
  const VALUE_T b = vk_bits_value(rhs_bits);
  switch (predicate) {
    case PRED_LESS: return a < b;
    case PRED_LESS_EQUAL: return a <= b;
    case PRED_GREATER: return a > b;
    case PRED_GREATER_EQUAL: return a >= b;
    case PRED_EQUAL: return a == b;
    default: return !(a == b);
  }
}

#endif  // VKPRIM_SELECT_IO_GLSL
