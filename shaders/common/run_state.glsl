// Run summaries of the keyed primitives (shaders/by_key/chained.comp) and their tile states.
// A summary of a stretch of elements is (c, v):
//   c: the count of the stretch's events (run heads, or ends of runs longer than one) in bits 0..30, and in
//      bit 31 whether the stretch holds a run head at all;
//   v: the operator's reduction of the values from the stretch's last run head to its end (all of them
//      where it holds no head): the part of a run that a later stretch continues.
// Summaries compose in input order (a then b): counts add, head bits or, and b's value restarts where b
// holds a head: combine(a, b) = (a.c + b.c, b has a head ? b.v : op(a.v, b.v)). This is associative, so
// tiles combine like any scan's aggregates (Sengupta, Harris, Zhang & Owens, "Scan Primitives for GPU
// Computing", 2007, turn a segmented scan into an unsegmented one over such pairs).
// Tile state (binding 2, after common/tile_state.glsl's 16 header words): per tile RUN_STATE_WORDS u32
// words, each (flag << 16 | a 16-bit part), c in two parts, then v's bits in two (32-bit values) or four
// parts (64-bit values; two per word of a user type's value) unless RUN_HAS_VALUE is false; with
// VKPRIM_STATE64 the same bytes as 64-bit words (flag << 32 | 32 bits), c then v's words. A reader takes a
// state only when every part carries the same flag (common/tile_state.glsl explains why that is sound: each
// flag comes with one value).
// Requires common/types.glsl and the constant RUN_HAS_VALUE (bool); the tile-state functions (vk_run_publish,
// vk_run_read) also common/tile_state.glsl, included before this file; without it they are left out.
#ifndef VKPRIM_RUN_STATE_GLSL
#define VKPRIM_RUN_STATE_GLSL

#define RUN_COUNT_MASK 0x7FFFFFFFu
#define RUN_HEAD_BIT 0x80000000u
#if defined(VKPRIM_TYPE_USER)
#define RUN_VALUE_WORDS VKPRIM_USER_WORDS
#elif VEC_N == 4
#define RUN_VALUE_WORDS 1u
#else
#define RUN_VALUE_WORDS 2u
#endif
#define RUN_VALUE_PARTS (2u * RUN_VALUE_WORDS)
const uint RUN_STATE_WORDS = RUN_HAS_VALUE ? 2u + RUN_VALUE_PARTS : 2u;

uint vk_run_count_add(uint a, uint b) { return ((a & RUN_COUNT_MASK) + (b & RUN_COUNT_MASK)) | ((a | b) & RUN_HEAD_BIT); }
bool vk_run_has_head(uint c) { return (c & RUN_HEAD_BIT) != 0u; }

// (c, v) = combine((ac, av), (bc, bv)).
void vk_run_combine(uint ac, VALUE_T av, uint bc, VALUE_T bv, out uint c, out VALUE_T v) {
  c = vk_run_count_add(ac, bc);
  v = vk_run_has_head(bc) || !RUN_HAS_VALUE ? bv : vk_op(av, bv);
}

// One element appended to a summary: it may start a run (head) and may count as an event.
void vk_run_step(bool head, bool event, VALUE_T x, inout uint c, inout VALUE_T v) {
  if (head) {
    c |= RUN_HEAD_BIT;
    v = x;
  } else {
    v = vk_op(v, x);
  }
  if (event) c += 1u;
}

// The summary's value as 32-bit words, and back (VK_RUN_VALUE: a macro, so the reads keep their code inline).
#if defined(VKPRIM_TYPE_USER)
#define RUN_BITS_T VALUE_BITS_T
#define VK_RUN_BITS(v) vk_value_bits(v)
#define VK_RUN_VALUE(w) vk_bits_value(w)
#elif VEC_N == 4
#define RUN_BITS_T uvec2
#define VK_RUN_BITS(v) uvec2(vk_value_bits(v), 0u)
#define VK_RUN_VALUE(w) vk_bits_value((w).x)
#else
#define RUN_BITS_T uvec2
#define VK_RUN_BITS(v) vk_value_bits(v)
#define VK_RUN_VALUE(w) vk_bits_value(w)
#endif
RUN_BITS_T vk_run_bits(VALUE_T v) { return VK_RUN_BITS(v); }

#if defined(VKPRIM_TILE_STATE_GLSL) && defined(VKPRIM_STATE64)
// VKPRIM_STATE64: one 64-bit word per 32 bits (common/tile_state.glsl), c then v's words, in the bytes of
// the 16-bit parts below.
void vk_run_publish(uint tile, uint flag, uint c, VALUE_T v) {
  const uint base = STATE_HEADER_WORDS / 2u + tile * (RUN_STATE_WORDS / 2u);
  vk_state_word64_publish(base, flag, c);
  if (RUN_HAS_VALUE) {
    const RUN_BITS_T w = vk_run_bits(v);
    [[unroll]] for (uint k = 0u; k < RUN_VALUE_WORDS; ++k) vk_state_word64_publish(base + 1u + k, flag, w[k]);
  }
}

uint vk_run_read(uint tile, out uint c, out VALUE_T v) {
  const uint base = STATE_HEADER_WORDS / 2u + tile * (RUN_STATE_WORDS / 2u);
  const uint flag = vk_state_word64_read(base, c);
  bool agree = true;
  v = vk_identity();
  if (RUN_HAS_VALUE) {
    RUN_BITS_T w;
    [[unroll]] for (uint k = 0u; k < RUN_VALUE_WORDS; ++k) {
      uint b;
      agree = vk_state_word64_read(base + 1u + k, b) == flag && agree;
      w[k] = b;
    }
    v = VK_RUN_VALUE(w);
  }
  return agree ? flag : STATE_NOT_READY;
}

#elif defined(VKPRIM_TILE_STATE_GLSL)
void vk_run_publish(uint tile, uint flag, uint c, VALUE_T v) {
  const uint base = STATE_HEADER_WORDS + tile * RUN_STATE_WORDS;
  const uint f = flag << 16u;
  atomicMax(state_words[base], f | (c & 0xFFFFu), gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_PUBLISH_SEMANTICS);
  atomicMax(state_words[base + 1u], f | (c >> 16u), gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_PUBLISH_SEMANTICS);
  if (RUN_HAS_VALUE) {
    const RUN_BITS_T w = VK_RUN_BITS(v);  // inline, as the parts kernels had it
    [[unroll]] for (uint k = 0u; k < RUN_VALUE_PARTS; ++k)
      atomicMax(state_words[base + 2u + k], f | ((w[k >> 1u] >> (16u * (k & 1u))) & 0xFFFFu), gl_ScopeQueueFamily,
                gl_StorageSemanticsBuffer, STATE_PUBLISH_SEMANTICS);
  }
}

// The flag of `tile`'s state (STATE_NOT_READY where its parts disagree) and its summary.
uint vk_run_read(uint tile, out uint c, out VALUE_T v) {
  const uint base = STATE_HEADER_WORDS + tile * RUN_STATE_WORDS;
  const uint w0 = atomicLoad(state_words[base], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_READ_SEMANTICS);
  const uint w1 = atomicLoad(state_words[base + 1u], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_READ_SEMANTICS);
  const uint flag = w0 >> 16u;
  bool agree = (w1 >> 16u) == flag;
  c = (w0 & 0xFFFFu) | (w1 << 16u);
  v = vk_identity();
  if (RUN_HAS_VALUE) {
#if defined(VKPRIM_TYPE_USER)
    VALUE_BITS_T w;
    for (uint k = 0u; k < VKPRIM_USER_WORDS; ++k) w[k] = 0u;
#else
    uvec2 w = uvec2(0u);
#endif
    [[unroll]] for (uint k = 0u; k < RUN_VALUE_PARTS; ++k) {
      const uint p = atomicLoad(state_words[base + 2u + k], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                                STATE_READ_SEMANTICS);
      agree = agree && (p >> 16u) == flag;
      w[k >> 1u] |= (p & 0xFFFFu) << (16u * (k & 1u));
    }
    v = VK_RUN_VALUE(w);
  }
  return agree ? flag : STATE_NOT_READY;
}

#endif  // VKPRIM_TILE_STATE_GLSL

#endif  // VKPRIM_RUN_STATE_GLSL
