#version 460
// TopK by radix select (Alabi et al., "Fast k-selection algorithms for graphics processing units", 2012) over
// the composite key (ordered key, input index): every composite is distinct, so 8-bit digit passes, most
// significant first (eight for 32-bit keys, twelve for 64-bit ones), narrow the bucket of the k-th smallest
// composite to one value, and exactly k composites lie at or below it. The index digits make the choice among
// equal keys the earliest inputs (stable).
// One kernel, its phase a specialization constant (PHASE):
//   init    one workgroup: the selection state and the digit counts cleared, the count and k stored (read
//           from the caller's buffers and clamped under TOPK_INDIRECT), remaining = min(k, count);
//   hist    grid stride: counts the digit `pass` of the composites that share the decided prefix;
//   scan    one workgroup: finds the digit whose bucket holds the remaining k-th composite, extends the prefix,
//           and clears the counts for the next pass; done once the whole bucket is taken;
//   select  grid stride: appends each composite at or below the prefix (on its decided bits) to the output
//           keys and the index list, at slots from an atomic counter (unordered: src/topk.cpp sorts them);
//   gather  an invocation per selected pair: out_values[i] = values[indices[i]];
//   filter  (TOPK_CANDIDATES, after the first digit) grid stride: keys below the first digit's bucket are
//           selected, those in it copied with their index to a candidate list that the later passes read
//           instead of the input (on uniform keys 1/256 of it).
// No subgroup operations; shared memory through barrier() and atomics; no workgroup waits on another.
// Specialization: WG_SIZE, KEY_FLAGS (the order-preserving key transform of common/radix.glsl), PHASE.
// Defines: VKPRIM_KEY64 (64-bit keys).
#extension GL_GOOGLE_include_directive : require

#include "common/config.glsl"

layout(constant_id = 3) const uint KEY_FLAGS = 0u;
layout(constant_id = 8) const uint PHASE = 0u;
#define PHASE_INIT 0u
#define PHASE_HIST 1u
#define PHASE_SCAN 2u
#define PHASE_SELECT 3u
#define PHASE_GATHER 4u
#define PHASE_FILTER 5u
// KEY_FLAGS bits, as common/radix.glsl's.
#define KEY_SIGNED 1u
#define KEY_FLOAT 2u
#define KEY_DESCENDING 4u

layout(push_constant) uniform TopKConstants {
  uint count;         // input keys
  uint k;             // keys to select, 1..count
  uint pass;          // count, choose: the digit, 0..11 (0..7 key digits, 8..11 index digits; 32-bit keys from 4)
  uint groups;        // workgroups of the grid-stride phases
  uint keys_shift;    // first element of each binding
  uint out_shift;
  uint index_shift;
  uint values_shift;
  uint out_values_shift;
  uint flags;         // TOPK_INDIRECT: init reads the count and k from bindings 6 and 7 (count, k: their maxima)
  uint count_shift;   // the count's word in binding 6
  uint k_shift;       // k's word in binding 7
} pc;
#define TOPK_INDIRECT 1u
// The passes after the first read the candidate list (the keys of the first digit's bucket) in the state
// binding instead of the input; the filter phase writes it.
#define TOPK_CANDIDATES 2u

#if defined(VKPRIM_KEY64)
#define KEY_T uvec2  // (low word, high word), as std430 lays out a 64-bit key
#else
#define KEY_T uint
#endif

layout(set = 0, binding = 0, std430) readonly buffer Keys { KEY_T keys[]; };
layout(set = 0, binding = 1, std430) buffer State { uint state[]; };
layout(set = 0, binding = 2, std430) buffer OutKeys { KEY_T out_keys[]; };
layout(set = 0, binding = 3, std430) buffer Indices { uint indices[]; };
layout(set = 0, binding = 4, std430) readonly buffer Values { uint values[]; };
layout(set = 0, binding = 5, std430) buffer OutValues { uint out_values[]; };
layout(set = 0, binding = 6, std430) readonly buffer CountIn { uint count_in[]; };
layout(set = 0, binding = 7, std430) readonly buffer KIn { uint k_in[]; };

// State words (src/topk.cpp kStateWords): the decided prefix of the composite (three words), the rank still to
// find within its bucket, the done flag, the decided bits, the append counter, the count, the keys to select
// (min(k, count): also the count of src/topk.cpp's sorts under record_indirect); then 256 digit counts.
#define ST_PREFIX 0u
#define ST_REMAINING 3u
#define ST_DONE 4u
#define ST_DECIDED 5u
#define ST_APPENDED 6u
#define ST_COUNT 7u
#define ST_SELECTED 8u
#define ST_CANDIDATES 9u
// The candidate list: from word ST_COUNTS + 256, CAND_WORDS words each, the key's words then the input index.
#define ST_CAND_BASE (ST_COUNTS + 256u)
#define ST_COUNTS 16u

shared uint s_counts[256];

// The composite key of input i, most significant word first: the ordered key's high word (0 for 32-bit keys,
// whose passes start at digit 4), its low word, the index. The order-preserving transform: unsigned as is,
// signed with the sign bit flipped, floats with every bit flipped when negative and the sign bit otherwise;
// descending inverts, so the k smallest composites are always taken.
uvec3 composite(KEY_T key, uint i) {
#if defined(VKPRIM_KEY64)
  const uint hi = key.y, lo = key.x;
#else
  const uint hi = key, lo = 0u;
#endif
  uint flip_hi = 0u, flip_lo = 0u;
  if ((KEY_FLAGS & KEY_FLOAT) != 0u) {
    flip_hi = (hi >> 31u) != 0u ? 0xFFFFFFFFu : 0x80000000u;
    flip_lo = (hi >> 31u) != 0u ? 0xFFFFFFFFu : 0u;
  } else if ((KEY_FLAGS & KEY_SIGNED) != 0u) {
    flip_hi = 0x80000000u;
  }
  if ((KEY_FLAGS & KEY_DESCENDING) != 0u) {
    flip_hi = ~flip_hi;
    flip_lo = ~flip_lo;
  }
#if defined(VKPRIM_KEY64)
  return uvec3(hi ^ flip_hi, lo ^ flip_lo, i);
#else
  return uvec3(0u, hi ^ flip_hi, i);
#endif
}

// The top `bits` bits of a word (0..32) as a mask; a shift by 32 is undefined in GLSL.
uint top_mask(uint bits) { return bits == 0u ? 0u : bits >= 32u ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> bits); }

// The first `decided` bits of a composite (the rest cleared).
uvec3 cut(uvec3 c, uint decided) {
  return c & uvec3(top_mask(min(decided, 32u)), top_mask(uint(clamp(int(decided) - 32, 0, 32))),
                   top_mask(uint(clamp(int(decided) - 64, 0, 32))));
}

bool lex_less_equal(uvec3 a, uvec3 b) {
  if (a.x != b.x) return a.x < b.x;
  if (a.y != b.y) return a.y < b.y;
  return a.z <= b.z;
}

uvec3 prefix() { return uvec3(state[ST_PREFIX], state[ST_PREFIX + 1u], state[ST_PREFIX + 2u]); }

// Digit `pass` (0..11, most significant first) of a composite.
uint digit_of(uvec3 c, uint pass) { return (c[pass / 4u] >> (24u - 8u * (pass % 4u))) & 0xFFu; }

#if defined(VKPRIM_KEY64)
#define CAND_WORDS 3u
const uint FIRST_PASS = 0u;
#else
#define CAND_WORDS 2u
const uint FIRST_PASS = 4u;  // the high word of a 32-bit key's composite is 0
#endif

bool from_candidates(uint pass) { return (pc.flags & TOPK_CANDIDATES) != 0u && pass > FIRST_PASS; }

// Element i of the pass's source: the input, or the candidate list; its key and input index.
void source_at(bool candidates, uint i, out KEY_T key, out uint index) {
  if (!candidates) {
    key = keys[pc.keys_shift + i];
    index = i;
    return;
  }
  const uint at = ST_CAND_BASE + i * CAND_WORDS;
#if defined(VKPRIM_KEY64)
  key = uvec2(state[at], state[at + 1u]);
#else
  key = state[at];
#endif
  index = state[at + CAND_WORDS - 1u];
}

void append_selected(KEY_T key, uint index, uint k) {
  const uint slot = atomicAdd(state[ST_APPENDED], 1u);
  if (slot >= k) return;  // never, by construction: exactly k composites are selected
  out_keys[pc.out_shift + slot] = key;
  indices[pc.index_shift + slot] = index;
}

void init_state() {
  const uint i = gl_LocalInvocationIndex;
  for (uint d = i; d < 256u; d += WG_SIZE) state[ST_COUNTS + d] = 0u;
  if (i == 0u) {
    uint n = pc.count, k = pc.k;
    if ((pc.flags & TOPK_INDIRECT) != 0u) {
      n = min(count_in[pc.count_shift], pc.count);
      k = min(k_in[pc.k_shift], pc.k);
    }
    k = min(k, n);
    state[ST_PREFIX] = 0u;
    state[ST_PREFIX + 1u] = 0u;
    state[ST_PREFIX + 2u] = 0u;
    state[ST_REMAINING] = k;
    state[ST_DONE] = k == 0u ? 1u : 0u;
    state[ST_DECIDED] = 0u;
    state[ST_APPENDED] = 0u;
    state[ST_COUNT] = n;
    state[ST_SELECTED] = k;
    state[ST_CANDIDATES] = 0u;
  }
}

void count_digits() {
  if (state[ST_DONE] != 0u) return;  // the same word for the whole workgroup: uniform
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  for (uint d = t; d < 256u; d += WG_SIZE) s_counts[d] = 0u;
  barrier();
  const uint decided = 8u * pc.pass;
  const uvec3 p = prefix();
  const bool candidates = from_candidates(pc.pass);
  const uint n = state[candidates ? ST_CANDIDATES : ST_COUNT];
  for (uint i = group * WG_SIZE + t; i < n; i += pc.groups * WG_SIZE) {
    KEY_T key;
    uint index;
    source_at(candidates, i, key, index);
    const uvec3 c = composite(key, index);
    if (cut(c, decided) == p) atomicAdd(s_counts[digit_of(c, pc.pass)], 1u);
  }
  barrier();
  for (uint d = t; d < 256u; d += WG_SIZE)
    if (s_counts[d] != 0u) atomicAdd(state[ST_COUNTS + d], s_counts[d]);
}

void choose_digit() {
  if (state[ST_DONE] != 0u) return;
  const uint t = gl_LocalInvocationIndex;
  for (uint d = t; d < 256u; d += WG_SIZE) {
    s_counts[d] = state[ST_COUNTS + d];
    state[ST_COUNTS + d] = 0u;
  }
  barrier();
  if (t != 0u) return;
  // The bucket holds the remaining rank: 256 steps by one invocation cost less than the dispatch.
  const uint remaining = state[ST_REMAINING];
  uint before = 0u, d = 0u;
  for (; d < 255u && before + s_counts[d] < remaining; ++d) before += s_counts[d];
  const uint rank = remaining - before;
  state[ST_PREFIX + pc.pass / 4u] |= d << (24u - 8u * (pc.pass % 4u));
  state[ST_REMAINING] = rank;
  state[ST_DECIDED] = 8u * (pc.pass + 1u);
  if (s_counts[d] == rank || pc.pass == 11u) state[ST_DONE] = 1u;
}

void select_keys() {
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint decided = state[ST_DECIDED];
  const uvec3 p = prefix();
  const bool candidates = (pc.flags & TOPK_CANDIDATES) != 0u;
  const uint n = state[candidates ? ST_CANDIDATES : ST_COUNT], k = state[ST_SELECTED];
  if (k == 0u) return;
  for (uint i = group * WG_SIZE + gl_LocalInvocationIndex; i < n; i += pc.groups * WG_SIZE) {
    KEY_T key;
    uint index;
    source_at(candidates, i, key, index);
    if (lex_less_equal(cut(composite(key, index), decided), p)) append_selected(key, index, k);
  }
}

// After the first digit: the keys below its bucket are selected, those in it (unless the whole bucket is
// taken) become the candidates of the later passes, in whatever order the atomics give (the index travels).
void filter_keys() {
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint decided = state[ST_DECIDED], n = state[ST_COUNT], k = state[ST_SELECTED];
  const bool done = state[ST_DONE] != 0u;
  const uvec3 p = prefix();
  if (k == 0u) return;
  for (uint i = group * WG_SIZE + gl_LocalInvocationIndex; i < n; i += pc.groups * WG_SIZE) {
    const KEY_T key = keys[pc.keys_shift + i];
    const uvec3 c = cut(composite(key, i), decided);
    if (c != p) {
      if (lex_less_equal(c, p)) append_selected(key, i, k);
      continue;
    }
    if (done) {
      append_selected(key, i, k);
      continue;
    }
    const uint at = ST_CAND_BASE + atomicAdd(state[ST_CANDIDATES], 1u) * CAND_WORDS;
#if defined(VKPRIM_KEY64)
    state[at] = key.x;
    state[at + 1u] = key.y;
#else
    state[at] = key;
#endif
    state[at + CAND_WORDS - 1u] = i;
  }
}

void gather_values() {
  const uint group = vk_workgroup_index();
  const uint i = group * WG_SIZE + gl_LocalInvocationIndex;
  if (group >= pc.groups || i >= state[ST_SELECTED]) return;
  out_values[pc.out_values_shift + i] = values[pc.values_shift + indices[pc.index_shift + i]];
}

void main() {
  if (PHASE == PHASE_INIT) init_state();
  else if (PHASE == PHASE_HIST) count_digits();
  else if (PHASE == PHASE_SCAN) choose_digit();
  else if (PHASE == PHASE_SELECT) select_keys();
  else if (PHASE == PHASE_FILTER) filter_keys();
  else gather_values();
}
