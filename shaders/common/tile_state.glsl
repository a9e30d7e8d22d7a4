// Tile state of the chained scans (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back", 2016; Smith, Levien & Owens, "Decoupled Fallback", SPAA 2025), bound at set 0 binding 2:
//   u32 words 0..15: header: [0] tile ticket, [1] fallbacks, [2] lookback polls, [3] deepest lookback
//   then one state per tile carrying the FULL value with its flag (NOT_READY 0 -> AGGREGATE 1 ->
//   INCLUSIVE 2; flags only move forward because every write is an atomicMax):
//   VKPRIM_STATE64 (shaderBufferInt64Atomics): one u64 word (flag << 32 | value bits) for 32-bit values;
//   user types: one such word per word of the value.
//   otherwise: the value bits in 16-bit halves over 2 (32-bit values) or 4 (64-bit values) u32 words,
//   each (flag << 16 | half) (user types: over 2 words per word of the value). A reader accepts a state
//   only when every word or part carries the same flag. For a given flag every writer writes the same
//   value (the owner and any fallback compute the aggregate with the same code in the same order), so
//   parts written by different writers still agree.
// Atomics follow the Vulkan memory model: queue-family scope, buffer storage semantics, semantics below.
// Requires common/types.glsl. Provides vk_state_publish(tile, flag, value), vk_state_read(tile, out value)
// (value: STATE_VALUE_T, VALUE_T unless VKPRIM_STATE_U32; returns the flag), vk_stat_add(counter, n),
// vk_stat_max(counter, n), vk_ticket(); with VKPRIM_STATE64 also vk_state_word64_publish / _read (one
// 64-bit word, for states laid out by their includer: common/run_state.glsl).
#ifndef VKPRIM_TILE_STATE_GLSL
#define VKPRIM_TILE_STATE_GLSL

#extension GL_KHR_memory_scope_semantics : require
#if defined(VKPRIM_STATE64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#endif
#include "common/types.glsl"

// Memory semantics of state reads and publications. Every message of the scan is the atomic word itself
// (value and flag travel together; split states are checked part by part and a flag always comes with
// the same value), so no other memory needs ordering and relaxed atomics are enough: measured on an
// H200, acquire reads + release publications cost 15% at 2^28 (docs/PERFORMANCE.md). A user that passes
// other data through the state (the litmus test) defines both as acquire / release.
#ifndef STATE_READ_SEMANTICS
#define STATE_READ_SEMANTICS gl_SemanticsRelaxed
#endif
#ifndef STATE_PUBLISH_SEMANTICS
#define STATE_PUBLISH_SEMANTICS gl_SemanticsRelaxed
#endif

#define STATE_NOT_READY 0u
#define STATE_AGGREGATE 1u
#define STATE_INCLUSIVE 2u
#define STATE_HEADER_WORDS 16u
#define STAT_FALLBACKS 1u
#define STAT_POLLS 2u
#define STAT_DEPTH 3u

layout(set = 0, binding = 2, std430) buffer TileStateWords { uint state_words[]; };

uint vk_ticket() {
  return atomicAdd(state_words[0], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void vk_stat_add(uint counter, uint n) {
  atomicAdd(state_words[counter], n, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void vk_stat_max(uint counter, uint n) {
  atomicMax(state_words[counter], n, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
// The tile of this workgroup: the workgroup index where the runtime set the launch-order bit (bit 30 of
// the kernel's knob word; ContextOptions::tile_order), else a ticket. Either way header word 0 counts the
// tiles started (a statistic): in launch order with an atomic nobody waits for. Call from one invocation.
uint vk_tile_index(uint knobs) {
  if ((knobs & KNOB_LAUNCH_ORDER) == 0u) return vk_ticket();
  vk_stat_add(0u, 1u);
  return vk_workgroup_index();
}
// The same in every invocation (call from uniform control flow). In launch order each invocation knows it
// without waiting, unless `synced`: then, as with a ticket, invocation 0 passes it on through shared memory
// across a barrier. ScanByKey ran 5% faster synced on an H100, the other keyed modes and the chained scan
// up to 2% faster unsynced (docs/PERFORMANCE.md).
shared uint vk_s_tile;
uint vk_workgroup_tile(uint knobs, bool synced) {
  if ((knobs & KNOB_LAUNCH_ORDER) != 0u && !synced) {
    if (gl_LocalInvocationIndex == 0u) vk_tile_index(knobs);
    return vk_workgroup_index();
  }
  if (gl_LocalInvocationIndex == 0u) vk_s_tile = vk_tile_index(knobs);
  barrier();
  return vk_s_tile;
}

// The published value as raw words (common/types.glsl's conversions), split in 16-bit parts.
// VKPRIM_STATE_U32: the state carries a u32 whatever VALUE_T is (stream compaction's selected counts,
// shaders/select/chained.comp).
#if defined(VKPRIM_STATE_U32)
#define STATE_VALUE_T uint
#define STATE_BITS_T uint
STATE_BITS_T vk_state_bits(uint v) { return v; }
uint vk_state_value(STATE_BITS_T b) { return b; }
#else
#define STATE_VALUE_T VALUE_T
#define STATE_BITS_T VALUE_BITS_T
STATE_BITS_T vk_state_bits(VALUE_T v) { return vk_value_bits(v); }
VALUE_T vk_state_value(STATE_BITS_T b) { return vk_bits_value(b); }
#endif
#if !defined(VKPRIM_STATE_U32) && defined(VKPRIM_TYPE_USER)
// User types: two 16-bit parts per word of the value.
#define STATE_PARTS (2u * VKPRIM_USER_WORDS)
#elif !defined(VKPRIM_STATE_U32) && (defined(VKPRIM_INT64) || defined(VKPRIM_TYPE_F64))
#define STATE_PARTS 4u
uint vk_bits_part(STATE_BITS_T b, uint k) { return (b[k >> 1u] >> (16u * (k & 1u))) & 0xFFFFu; }
STATE_BITS_T vk_bits_from_parts(uint p0, uint p1, uint p2, uint p3) { return uvec2(p0 | (p1 << 16u), p2 | (p3 << 16u)); }
#else
#define STATE_PARTS 2u
uint vk_bits_part(STATE_BITS_T b, uint k) { return (b >> (16u * k)) & 0xFFFFu; }
STATE_BITS_T vk_bits_from_parts(uint p0, uint p1, uint p2, uint p3) { return p0 | (p1 << 16u); }
#endif

#if defined(VKPRIM_STATE64)
layout(set = 0, binding = 2, std430) buffer TileStateWords64 { uint64_t state_words64[]; };

// One 64-bit state word, (flag << 32 | 32 bits of the state), at `index` of state_words64. States wider than
// 32 bits (user types; the keyed primitives' run summaries, common/run_state.glsl) take one such word per
// 32 bits: the same bytes as 16-bit parts with half the atomics. A reader accepts the state only when every
// word carries the same flag, as with parts.
void vk_state_word64_publish(uint index, uint flag, uint bits) {
  atomicMax(state_words64[index], (uint64_t(flag) << 32) | uint64_t(bits), gl_ScopeQueueFamily,
            gl_StorageSemanticsBuffer, STATE_PUBLISH_SEMANTICS);
}
uint vk_state_word64_read(uint index, out uint bits) {
  const uint64_t word = atomicLoad(state_words64[index], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                                   STATE_READ_SEMANTICS);
  bits = uint(word & 0xFFFFFFFFul);
  return uint(word >> 32);
}
#endif

#if defined(VKPRIM_STATE64) && defined(VKPRIM_TYPE_USER) && !defined(VKPRIM_STATE_U32)
void vk_state_publish(uint tile, uint flag, VALUE_T value) {
  const VALUE_BITS_T bits = vk_value_bits(value);
  const uint base = STATE_HEADER_WORDS / 2u + tile * VKPRIM_USER_WORDS;
  for (uint k = 0u; k < VKPRIM_USER_WORDS; ++k) vk_state_word64_publish(base + k, flag, bits[k]);
}
uint vk_state_read(uint tile, out VALUE_T value) {
  const uint base = STATE_HEADER_WORDS / 2u + tile * VKPRIM_USER_WORDS;
  VALUE_BITS_T bits;
  const uint flag = vk_state_word64_read(base, bits[0]);
  bool agree = true;
  for (uint k = 1u; k < VKPRIM_USER_WORDS; ++k) {
    uint b;
    agree = vk_state_word64_read(base + k, b) == flag && agree;
    bits[k] = b;
  }
  value = vk_bits_value(bits);
  return agree ? flag : STATE_NOT_READY;
}
#elif defined(VKPRIM_STATE64)
void vk_state_publish(uint tile, uint flag, STATE_VALUE_T value) {
  const uint64_t word = (uint64_t(flag) << 32) | uint64_t(vk_state_bits(value));
  atomicMax(state_words64[STATE_HEADER_WORDS / 2u + tile], word, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
            STATE_PUBLISH_SEMANTICS);
}
uint vk_state_read(uint tile, out STATE_VALUE_T value) {
  const uint64_t word = atomicLoad(state_words64[STATE_HEADER_WORDS / 2u + tile], gl_ScopeQueueFamily,
                                   gl_StorageSemanticsBuffer, STATE_READ_SEMANTICS);
  value = vk_state_value(uint(word & 0xFFFFFFFFul));
  return uint(word >> 32);
}
#elif !defined(VKPRIM_STATE_U32) && defined(VKPRIM_TYPE_USER)
void vk_state_publish(uint tile, uint flag, VALUE_T value) {
  const VALUE_BITS_T bits = vk_value_bits(value);
  const uint base = STATE_HEADER_WORDS + tile * STATE_PARTS;
  for (uint k = 0u; k < STATE_PARTS; ++k)
    atomicMax(state_words[base + k], (flag << 16u) | ((bits[k >> 1u] >> (16u * (k & 1u))) & 0xFFFFu),
              gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_PUBLISH_SEMANTICS);
}
uint vk_state_read(uint tile, out VALUE_T value) {
  const uint base = STATE_HEADER_WORDS + tile * STATE_PARTS;
  VALUE_BITS_T bits;
  uint flag = 0xFFFFFFFFu;
  bool agree = true;
  for (uint k = 0u; k < STATE_PARTS; ++k) {
    const uint w = atomicLoad(state_words[base + k], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_READ_SEMANTICS);
    if (k == 0u) flag = w >> 16u;
    else agree = agree && (w >> 16u) == flag;
    if ((k & 1u) == 0u) bits[k >> 1u] = w & 0xFFFFu;
    else bits[k >> 1u] |= (w & 0xFFFFu) << 16u;
  }
  value = vk_bits_value(bits);
  return agree ? flag : STATE_NOT_READY;
}
#else
void vk_state_publish(uint tile, uint flag, STATE_VALUE_T value) {
  const STATE_BITS_T bits = vk_state_bits(value);
  const uint base = STATE_HEADER_WORDS + tile * STATE_PARTS;
  [[unroll]] for (uint k = 0u; k < STATE_PARTS; ++k)
    atomicMax(state_words[base + k], (flag << 16u) | vk_bits_part(bits, k), gl_ScopeQueueFamily,
              gl_StorageSemanticsBuffer, STATE_PUBLISH_SEMANTICS);
}
uint vk_state_read(uint tile, out STATE_VALUE_T value) {
  const uint base = STATE_HEADER_WORDS + tile * STATE_PARTS;
  uint parts[4] = uint[4](0u, 0u, 0u, 0u);
  uint flag = 0xFFFFFFFFu;
  bool agree = true;
  [[unroll]] for (uint k = 0u; k < STATE_PARTS; ++k) {
    const uint w = atomicLoad(state_words[base + k], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, STATE_READ_SEMANTICS);
    parts[k] = w & 0xFFFFu;
    if (k == 0u) flag = w >> 16u;
    else agree = agree && (w >> 16u) == flag;
  }
  value = vk_state_value(vk_bits_from_parts(parts[0], parts[1], parts[2], parts[3]));
  return agree ? flag : STATE_NOT_READY;
}
#endif

#endif  // VKPRIM_TILE_STATE_GLSL
