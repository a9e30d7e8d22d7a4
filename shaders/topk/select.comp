#version 460
// TopK by radix select (Alabi et al., "Fast k-selection algorithms for graphics processing units", 2012) over
// the composite key (ordered key, input index): every composite is distinct, so eight 8-bit digit passes, most
// significant first, narrow the bucket of the k-th smallest composite to one value, and exactly k composites
// lie at or below it. The index digits make the choice among equal keys the earliest inputs (stable).
// One kernel, its phase a specialization constant (PHASE):
//   init    one workgroup: the selection state and the digit counts cleared, the count and k stored (read
//           from the caller's buffers and clamped under TOPK_INDIRECT), remaining = min(k, count);
//   hist    grid stride: counts the digit `pass` of the composites that share the decided prefix;
//   scan    one workgroup: finds the digit whose bucket holds the remaining k-th composite, extends the prefix,
//           and clears the counts for the next pass; done once the whole bucket is taken;
//   select  grid stride: appends each composite at or below the prefix (on its decided bits) to the output
//           keys and the index list, at slots from an atomic counter (unordered: src/topk.cpp sorts them);
//   gather  an invocation per selected pair: out_values[i] = values[indices[i]].
// No subgroup operations; shared memory through barrier() and atomics; no workgroup waits on another.
// Specialization: WG_SIZE, KEY_FLAGS (the order-preserving key transform of common/radix.glsl), PHASE.
#extension GL_GOOGLE_include_directive : require

#include "common/config.glsl"

layout(constant_id = 3) const uint KEY_FLAGS = 0u;
layout(constant_id = 8) const uint PHASE = 0u;
#define PHASE_INIT 0u
#define PHASE_HIST 1u
#define PHASE_SCAN 2u
#define PHASE_SELECT 3u
#define PHASE_GATHER 4u
// KEY_FLAGS bits, as common/radix.glsl's.
#define KEY_SIGNED 1u
#define KEY_FLOAT 2u
#define KEY_DESCENDING 4u

layout(push_constant) uniform TopKConstants {
  uint count;         // input keys
  uint k;             // keys to select, 1..count
  uint pass;          // hist, scan: the digit pass, 0..7 (0..3 key digits, 4..7 index digits)
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

layout(set = 0, binding = 0, std430) readonly buffer Keys { uint keys[]; };
layout(set = 0, binding = 1, std430) buffer State { uint state[]; };
layout(set = 0, binding = 2, std430) buffer OutKeys { uint out_keys[]; };
layout(set = 0, binding = 3, std430) buffer Indices { uint indices[]; };
layout(set = 0, binding = 4, std430) readonly buffer Values { uint values[]; };
layout(set = 0, binding = 5, std430) buffer OutValues { uint out_values[]; };
layout(set = 0, binding = 6, std430) readonly buffer CountIn { uint count_in[]; };
layout(set = 0, binding = 7, std430) readonly buffer KIn { uint k_in[]; };

// State words (src/topk.cpp kStateWords): the decided prefix of the composite, the rank still to find
// within its bucket, the done flag, the decided bits, the append counter, the count, the keys to select
// (min(k, count): also the count of src/topk.cpp's sorts under record_indirect); then 256 digit counts.
#define ST_PREFIX_HI 0u
#define ST_PREFIX_LO 1u
#define ST_REMAINING 2u
#define ST_DONE 3u
#define ST_DECIDED 4u
#define ST_APPENDED 5u
#define ST_COUNT 6u
#define ST_SELECTED 7u
#define ST_COUNTS 16u

shared uint s_counts[256];

// The order-preserving transform: unsigned as is, signed with the sign bit flipped, floats with every bit
// flipped when negative and the sign bit otherwise; descending inverts, so the k smallest are always taken.
uint ordered_key(uint k) {
  uint flip = 0u;
  if ((KEY_FLAGS & KEY_FLOAT) != 0u) flip = (k >> 31u) != 0u ? 0xFFFFFFFFu : 0x80000000u;
  else if ((KEY_FLAGS & KEY_SIGNED) != 0u) flip = 0x80000000u;
  if ((KEY_FLAGS & KEY_DESCENDING) != 0u) flip = ~flip;
  return k ^ flip;
}

// The top `bits` bits of a word (0..32) as a mask; a shift by 32 is undefined in GLSL.
uint top_mask(uint bits) { return bits == 0u ? 0u : bits >= 32u ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> bits); }

// Whether composite (hi, lo) agrees with the prefix on its first `decided` bits.
bool shares_prefix(uint hi, uint lo, uint decided, uint prefix_hi, uint prefix_lo) {
  const uint mh = top_mask(min(decided, 32u)), ml = top_mask(decided > 32u ? decided - 32u : 0u);
  return (hi & mh) == (prefix_hi & mh) && (lo & ml) == (prefix_lo & ml);
}

// Whether composite (hi, lo), cut to its first `decided` bits, is at or below the prefix.
bool at_or_below(uint hi, uint lo, uint decided, uint prefix_hi, uint prefix_lo) {
  hi &= top_mask(min(decided, 32u));
  lo &= top_mask(decided > 32u ? decided - 32u : 0u);
  return hi < prefix_hi || (hi == prefix_hi && lo <= prefix_lo);
}

uint digit_of(uint hi, uint lo, uint pass) {
  return pass < 4u ? (hi >> (24u - 8u * pass)) & 0xFFu : (lo >> (24u - 8u * (pass - 4u))) & 0xFFu;
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
    state[ST_PREFIX_HI] = 0u;
    state[ST_PREFIX_LO] = 0u;
    state[ST_REMAINING] = k;
    state[ST_DONE] = k == 0u ? 1u : 0u;
    state[ST_COUNT] = n;
    state[ST_SELECTED] = k;
    state[ST_DECIDED] = 0u;
    state[ST_APPENDED] = 0u;
  }
}

void count_digits() {
  if (state[ST_DONE] != 0u) return;  // the same word for the whole workgroup: uniform
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  for (uint d = t; d < 256u; d += WG_SIZE) s_counts[d] = 0u;
  barrier();
  const uint decided = 8u * pc.pass, prefix_hi = state[ST_PREFIX_HI], prefix_lo = state[ST_PREFIX_LO];
  const uint n = state[ST_COUNT];
  for (uint i = group * WG_SIZE + t; i < n; i += pc.groups * WG_SIZE) {
    const uint hi = ordered_key(keys[pc.keys_shift + i]);
    if (shares_prefix(hi, i, decided, prefix_hi, prefix_lo)) atomicAdd(s_counts[digit_of(hi, i, pc.pass)], 1u);
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
  if (pc.pass < 4u) state[ST_PREFIX_HI] |= d << (24u - 8u * pc.pass);
  else state[ST_PREFIX_LO] |= d << (24u - 8u * (pc.pass - 4u));
  state[ST_REMAINING] = rank;
  state[ST_DECIDED] = 8u * (pc.pass + 1u);
  if (s_counts[d] == rank || pc.pass == 7u) state[ST_DONE] = 1u;
}

void select_keys() {
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint decided = state[ST_DECIDED], prefix_hi = state[ST_PREFIX_HI], prefix_lo = state[ST_PREFIX_LO];
  const uint n = state[ST_COUNT], k = state[ST_SELECTED];
  if (k == 0u) return;
  for (uint i = group * WG_SIZE + gl_LocalInvocationIndex; i < n; i += pc.groups * WG_SIZE) {
    const uint key = keys[pc.keys_shift + i];
    if (!at_or_below(ordered_key(key), i, decided, prefix_hi, prefix_lo)) continue;
    const uint slot = atomicAdd(state[ST_APPENDED], 1u);
    if (slot >= k) continue;  // never, by construction: exactly k composites are at or below
    out_keys[pc.out_shift + slot] = key;
    indices[pc.index_shift + slot] = i;
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
  else gather_values();
}
