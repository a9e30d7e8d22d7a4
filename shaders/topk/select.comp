#version 460
// TopK by radix select (Alabi et al., "Fast k-selection algorithms for graphics processing units", 2012) over
// the composite key (ordered key, input index): every composite is distinct, so 8-bit digits, most significant
// first, narrow the bucket of the k-th smallest composite to one value, and exactly k composites lie at or below
// it. The index digits make the choice among equal keys the earliest inputs (stable); the fallback makes the
// same choice by counting, in index order, the keys equal to the k-th (tally, select).
// A record takes the sample path, one read of the input, and falls back on the digit passes over the input
// when the sample's threshold misses (src/topk.cpp). One kernel, its phase a specialization constant (PHASE):
//   sample  SAMPLES workgroups: workgroup 0 clears the selection state and stores the count and k (read from
//           the caller's buffers and clamped under TOPK_INDIRECT); each invocation reads one of WG_SIZE *
//           SAMPLES keys evenly spaced and writes its ordered key to ST_SAMPLES;
//   threshold  one workgroup: the ordered key of rank sample_rank() among the samples, by a radix select in
//           registers (a bucket of at most WG_SIZE samples finished by counting): the threshold;
//   sieve   grid stride, 16-byte loads: every key whose ordered key is at most the threshold goes, with its
//           index, to the candidate list (room for pc.capacity; all are counted; staged in shared memory, one
//           global atomic per workgroup), and its digit below the threshold's leading zeros to a histogram;
//   split   grid stride over the list, where k <= candidates <= capacity: the first digit's bucket chosen from
//           that histogram (by every workgroup alike), the entries below it appended to the output, the
//           bucket's moved to list 1 (or appended, when taken whole, and under TOPK_RANKED where the entries
//           below it and in it number at most RANK_UNION_MAX: the direct list, which the rank pass finishes);
//           the workgroup that finishes last (an atomic ticket, no waiting) then refines:
//   refine  (the split's last workgroup) on the sample path, radix select over list 1, each digit moving the
//           keys below the chosen bucket to the output and the bucket to the other list, until a bucket is
//           taken whole or the list holds at most 2 WG_SIZE entries (then ranked by counting: rank_finish), unless
//           the split took a direct list; the fallback's dispatch arguments zero. Else the arguments that run:
//   hist    (fallback) grid stride: counts the key digit `pass` of the composites that share the decided
//           prefix; the workgroup that finishes last (an atomic ticket, no waiting) then finds the digit whose
//           bucket holds the remaining k-th composite, extends the prefix, and clears the counts for the next
//           pass; done once the whole bucket is taken;
//   filter  (fallback, TOPK_CANDIDATES, after the first digit) as the sieve: keys below the first digit's
//           bucket are selected, those in it copied with their index to the candidate list that the later
//           passes read instead of the input, and their next digit counted (the count pass `pass`, merged);
//   tally   (fallback, after the last key digit with more keys equal to the k-th key K than the rank left)
//           each workgroup counts the keys equal to K in its chunk of the input (contiguous, in index order);
//   select  (fallback) grid stride: appends each composite at or below the prefix (on its decided bits); after
//           a tally, over the chunks: the keys below K (not yet appended) and the earliest keys equal to K;
//   gather  an invocation per selected pair: out_values[i] = values[indices[i]];
//   rank    (TOPK_RANKED: sorted output of at most RANK_MAX keys, instead of the sorts and the gather) each
//           composite of the rank list (the k selected, or the split's direct list) ranked among the list by
//           counting, and the keys (and values) of rank below k written there.
// Appends to the output and the lists are unordered (src/topk.cpp sorts or ranks the selection) and aggregated:
// one global atomic per workgroup and tile. No subgroup operations; shared memory through barrier() and atomics;
// no workgroup waits on another.
// The fallback's counts and ticket: State is coherent, each workgroup adds its counts with atomics and a
// memoryBarrierBuffer() before it takes its ticket, and the last one reads them after its own.
// Specialization: WG_SIZE, KEY_FLAGS (the order-preserving key transform of common/radix.glsl), PHASE.
// Defines: VKPRIM_KEY64 (64-bit keys).
#extension GL_GOOGLE_include_directive : require

#include "common/config.glsl"

layout(constant_id = 3) const uint KEY_FLAGS = 0u;
layout(constant_id = 8) const uint PHASE = 0u;
#define PHASE_SAMPLE 0u
#define PHASE_HIST 1u
#define PHASE_SELECT 2u
#define PHASE_GATHER 3u
#define PHASE_FILTER 4u
#define PHASE_SIEVE 5u
#define PHASE_THRESHOLD 6u
#define PHASE_SPLIT 7u
#define PHASE_RANK 8u
#define PHASE_TALLY 9u
// KEY_FLAGS bits, as common/radix.glsl's.
#define KEY_SIGNED 1u
#define KEY_FLOAT 2u
#define KEY_DESCENDING 4u

layout(push_constant) uniform TopKConstants {
  uint count;         // input keys
  uint k;             // keys to select, 1..count
  uint pass;          // count, choose: the key digit, 0..7 (32-bit keys from 4)
  uint groups;        // workgroups of the grid-stride phases (the fallback's dispatch arguments)
  uint keys_shift;    // first element of each binding
  uint out_shift;
  uint index_shift;
  uint values_shift;
  uint out_values_shift;
  uint flags;         // TOPK_INDIRECT: sample reads the count and k from bindings 6 and 7 (count, k: their maxima)
  uint count_shift;   // the count's word in binding 6
  uint k_shift;       // k's word in binding 7
  uint capacity;      // sieve, split: room of each of the sample path's two lists; filter: no limit
  uint fallback_groups;  // split: the fallback's grid, for its dispatch arguments
  uint rank_base;     // TOPK_RANKED: the rank list's first entry (after the lists)
  uint pad;
} pc;
#define TOPK_INDIRECT 1u
// The fallback's passes after the first read the candidate list (the keys of the first digit's bucket) in the
// state binding instead of the input; the filter phase writes it.
#define TOPK_CANDIDATES 2u
// The selection (at most RANK_MAX composites) goes to the rank list in the state binding, and the rank phase
// writes each key (and with TOPK_PAIRS its value) to out_keys at its rank: the sorted output without a sort.
#define TOPK_RANKED 4u
#define TOPK_PAIRS 8u
// The rank list's room (src/topk.cpp kRankListEntries): k entries, or under TOPK_RANKED, where the split's
// entries below its bucket and those in it number at most this, all of them (the split's direct list: the rank
// pass keeps the k smallest, and no refine runs).
#define RANK_UNION_MAX 2048u

#if defined(VKPRIM_KEY64)
#define KEY_T uvec2  // (low word, high word), as std430 lays out a 64-bit key
#define KEY_WORDS 2u
#else
#define KEY_T uint
#define KEY_WORDS 1u
#endif
#define CAND_WORDS (KEY_WORDS + 1u)  // a list entry: the key's words, then the input index

layout(set = 0, binding = 0, std430) readonly buffer Keys { KEY_T keys[]; };
layout(set = 0, binding = 0, std430) readonly buffer KeyVectors { uvec4 key_vectors[]; };
// Coherent: the refine's workgroup reads the list entries that the split's workgroups and its own invocations wrote.
layout(set = 0, binding = 1, std430) coherent buffer State { uint state[]; };
// A 32-bit key's list entry (key, index) as one 8-byte access (ST_CAND_BASE is even).
layout(set = 0, binding = 1, std430) coherent buffer StatePairs { uvec2 state_pairs[]; };
// Non-coherent views of the same words, for what an earlier dispatch wrote (the samples, the sieve's list):
// their loads may be batched and cached like any others.
layout(set = 0, binding = 1, std430) readonly buffer StateIn { uint state_in[]; };
layout(set = 0, binding = 1, std430) readonly buffer StatePairsIn { uvec2 state_pairs_in[]; };
layout(set = 0, binding = 2, std430) buffer OutKeys { KEY_T out_keys[]; };
layout(set = 0, binding = 3, std430) buffer Indices { uint indices[]; };
layout(set = 0, binding = 4, std430) readonly buffer Values { uint values[]; };
layout(set = 0, binding = 5, std430) buffer OutValues { uint out_values[]; };
layout(set = 0, binding = 6, std430) readonly buffer CountIn { uint count_in[]; };
layout(set = 0, binding = 7, std430) readonly buffer KIn { uint k_in[]; };

// State words (src/topk.cpp state_words_for, kSelectedWord, kPathWord): the decided prefix of the composite
// (three words), the rank still to find within its bucket, the done flag, the decided bits, the append counter,
// the count, the keys to select (min(k, count): also the count of src/topk.cpp's sorts under record_indirect),
// the list's counter, the threshold (ordered key: high word, low word), the path taken (0 nothing to select,
// 1 sample, 2 fallback), the sieve's digit (the threshold's leading zero bits), the workgroups of the
// fallback's count pass that have added their counts, the split's counter of list 1, the split's workgroups
// that have finished (the refine's ticket), the rank pass's list length; words 18..31 unused (the fallback's
// dispatch arguments live in their own range of scratch, outside this binding); 256 digit counts;
// the samples (SAMPLE_SLOTS ordered keys); then the lists (CAND_WORDS words per entry): the sample path's two,
// of pc.capacity entries each, or the fallback's one (room for the count).
#define ST_PREFIX 0u
#define ST_REMAINING 3u
#define ST_DONE 4u
#define ST_DECIDED 5u
#define ST_APPENDED 6u
#define ST_COUNT 7u
#define ST_SELECTED 8u
#define ST_CANDIDATES 9u
#define ST_THRESHOLD 10u
#define ST_PATH 12u
#define ST_SIEVE_DIGIT 13u
#define ST_TICKET 14u
#define ST_NEXT 15u
#define ST_SPLIT_TICKET 16u
#define ST_RANK_COUNT 17u
#define ST_COUNTS 32u
#define ST_SAMPLES (ST_COUNTS + 256u)
#define SAMPLE_SLOTS 8192u  // WG_SIZE * SAMPLES at most (src/topk.cpp keeps WG_SIZE <= 256)
#define ST_CAND_BASE (ST_SAMPLES + SAMPLE_SLOTS * KEY_WORDS)
#define PATH_NONE 0u
#define PATH_SAMPLE 1u
#define PATH_FALLBACK 2u

// The sample: SAMPLES keys per invocation of the threshold (in local memory). Its rank: src/topk.cpp's
// sample_capacity mirrors this formula to size the lists (see the table there for the choice).
#define SAMPLES 32u
#define SAMPLE_SIGMAS 6.0
#define SAMPLE_SLACK 3.0
// 16-byte loads per invocation per tile of the sieve and the filter.
#define TILE_VECTORS 8u
#define VECTOR_KEYS (4u / KEY_WORDS)
// List entries per invocation per round of the refine, loaded before any is used (few: each is unrolled code
// that one workgroup fetches from memory once per record; see sample_threshold).
#define REFINE_BATCH 8u
// List entries per invocation per tile of the split.
#define SPLIT_ITEMS 8u

shared uint s_counts[256];
shared uint s_scan[2][256];
shared uint s_choice[3];  // the chosen bucket, the composites before it, those in it
shared uint s_tally[4];   // per tile parity: the output's and the list's slots taken by the workgroup
shared uint s_base[4];    // per tile parity: their first slots
shared uint s_words[4];   // broadcasts
// The sieve's stage of listed entries (CAND_WORDS words each) and its count.
#define STAGE_ENTRIES 1024u
shared uint s_stage[STAGE_ENTRIES * CAND_WORDS];
shared uint s_staged;

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

// The 8 bits of a composite after its first `decided` bits (0..88).
// Words picked by selects, not a dynamic index (which may put the vector in local memory, a memory round trip
// per call on the refine's and the threshold's per-key paths).
uint digit_at(uvec3 c, uint decided) {
  const uint w = decided / 32u, shift = decided % 32u;
  const uint hi = w == 0u ? c.x : w == 1u ? c.y : c.z;
  const uint lo = w == 0u ? c.y : w == 1u ? c.z : 0u;
  const uint bits = shift == 0u ? hi : (hi << shift) | (lo >> (32u - shift));
  return bits >> 24u;
}

// The composite with digit d put after its first `decided` bits (0..88; those bits of c clear).
uvec3 with_digit(uvec3 c, uint decided, uint d) {
  const uint w = decided / 32u, shift = decided % 32u;
  const uint a = shift <= 24u ? d << (24u - shift) : d >> (shift - 24u);  // into word w
  const uint b = shift > 24u ? d << (56u - shift) : 0u;                    // into word w + 1
  return c | uvec3(w == 0u ? a : 0u, w == 1u ? a : w == 0u ? b : 0u, w == 2u ? a : w == 1u ? b : 0u);
}

#if defined(VKPRIM_KEY64)
const uint FIRST_PASS = 0u;
#else
const uint FIRST_PASS = 4u;  // the high word of a 32-bit key's composite is 0
#endif

// The choice of a digit, shared by the threshold, the split, the refine and the fallback's scan: s_counts
// holds the 256 digit counts (complete: every invocation calls this after a barrier); s_choice gets the bucket
// holding the composite of rank `remaining` (1-based), the composites before it and those in it. An inclusive
// scan of the counts (Hillis-Steele, ping-pong in s_scan), then the one bucket whose range holds the rank claims
// it. (A two-barrier scan by 16 invocations, 16 counts each, measured slower on an H200.)
void choose_bucket(uint remaining) {
  const uint t = gl_LocalInvocationIndex;
  for (uint d = t; d < 256u; d += WG_SIZE) s_scan[0][d] = s_counts[d];
  if (t == 0u) {
    s_choice[0] = 255u;  // only if the counts hold fewer than `remaining`, which the callers rule out
    s_choice[1] = 0u;
    s_choice[2] = 0u;
  }
  barrier();
  uint from = 0u;
  for (uint offset = 1u; offset < 256u; offset <<= 1u) {
    for (uint d = t; d < 256u; d += WG_SIZE)
      s_scan[from ^ 1u][d] = s_scan[from][d] + (d >= offset ? s_scan[from][d - offset] : 0u);
    from ^= 1u;
    barrier();
  }
  for (uint d = t; d < 256u; d += WG_SIZE) {
    const uint before = s_scan[from][d] - s_counts[d];
    if (before < remaining && remaining <= s_scan[from][d]) {
      s_choice[0] = d;
      s_choice[1] = before;
      s_choice[2] = s_counts[d];
    }
  }
  barrier();
}

void clear_counts() {
  for (uint d = gl_LocalInvocationIndex; d < 256u; d += WG_SIZE) s_counts[d] = 0u;
  barrier();
}

// Every invocation calls it (barriers), once per tile with alternating parity: takes `mine` slots of the
// output (x, counter ST_APPENDED) and of the list (y, counter list_word) for this invocation, with one
// global atomic per counter and workgroup, and returns its first slot of each. Parity p's tallies are cleared
// during the other parity's tile, after every use of them (two barriers apart).
uvec2 reserve_slots(uvec2 mine, uint parity, uint list_word) {
  const uint at = parity * 2u;
  uvec2 local = uvec2(0u);
  if (mine.x != 0u) local.x = atomicAdd(s_tally[at], mine.x);
  if (mine.y != 0u) local.y = atomicAdd(s_tally[at + 1u], mine.y);
  barrier();
  if (gl_LocalInvocationIndex == 0u) {
    const uint out_n = s_tally[at], list_n = s_tally[at + 1u];
    s_base[at] = out_n == 0u ? 0u : atomicAdd(state[ST_APPENDED], out_n);
    s_base[at + 1u] = list_n == 0u ? 0u : atomicAdd(state[list_word], list_n);
    s_tally[(at ^ 2u)] = 0u;
    s_tally[(at ^ 2u) + 1u] = 0u;
  }
  barrier();
  return uvec2(s_base[at], s_base[at + 1u]) + local;
}

void start_slots() {
  if (gl_LocalInvocationIndex == 0u) {
    s_tally[0] = 0u;
    s_tally[1] = 0u;
  }
  barrier();
}

// min(k, count), read once per invocation by the phases that append (main).
uint g_selected = 0u;

void write_entry(uint list, uint slot, KEY_T key, uint index) {
#if defined(VKPRIM_KEY64)
  const uint at = ST_CAND_BASE + (list + slot) * CAND_WORDS;
  state[at] = key.x;
  state[at + 1u] = key.y;
  state[at + 2u] = index;
#else
  state_pairs[ST_CAND_BASE / 2u + list + slot] = uvec2(key, index);
#endif
}

void append_selected(KEY_T key, uint index, uint slot) {
  if (slot >= g_selected) return;  // never, by construction: exactly k composites are selected
  if ((pc.flags & TOPK_RANKED) != 0u) {
    write_entry(pc.rank_base, slot, key, index);
    return;
  }
  out_keys[pc.out_shift + slot] = key;
  indices[pc.index_shift + slot] = index;
}

void read_entry(uint list, uint slot, out KEY_T key, out uint index) {
#if defined(VKPRIM_KEY64)
  const uint at = ST_CAND_BASE + (list + slot) * CAND_WORDS;
  key = uvec2(state[at], state[at + 1u]);
  index = state[at + 2u];
#else
  const uvec2 entry = state_pairs[ST_CAND_BASE / 2u + list + slot];
  key = entry.x;
  index = entry.y;
#endif
}

// As read_entry, of a list an earlier dispatch wrote (non-coherent view).
void read_entry_in(uint list, uint slot, out KEY_T key, out uint index) {
#if defined(VKPRIM_KEY64)
  const uint at = ST_CAND_BASE + (list + slot) * CAND_WORDS;
  key = uvec2(state_in[at], state_in[at + 1u]);
  index = state_in[at + 2u];
#else
  const uvec2 entry = state_pairs_in[ST_CAND_BASE / 2u + list + slot];
  key = entry.x;
  index = entry.y;
#endif
}

// ---- sample ----

// The record's count and min(k, count) (under TOPK_INDIRECT read from the caller's buffers, clamped).
uvec2 count_and_k() {
  uint n = pc.count, k = pc.k;
  if ((pc.flags & TOPK_INDIRECT) != 0u) {
    n = min(count_in[pc.count_shift], pc.count);
    k = min(k_in[pc.k_shift], pc.k);
  }
  return uvec2(n, min(k, n));
}

// Workgroup 0 of the sample pass: the selection state cleared, the count and k stored.
void init_state(uint n, uint k) {
  const uint i = gl_LocalInvocationIndex;
  for (uint d = i; d < 256u; d += WG_SIZE) state[ST_COUNTS + d] = 0u;
  if (i == 0u) {
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
    state[ST_PATH] = PATH_NONE;
    state[ST_TICKET] = 0u;
    state[ST_NEXT] = 0u;
    state[ST_SPLIT_TICKET] = 0u;
  }
}

// SAMPLES workgroups, one key per invocation: sample j = group * WG_SIZE + t of WG_SIZE * SAMPLES evenly
// spaced (all where fewer), its ordered key (the composite's key words) to ST_SAMPLES. Spread over SAMPLES
// workgroups so that the scattered loads, each a trip to memory, run on as many multiprocessors.
void sample_keys() {
  const uvec2 nk = count_and_k();
  const uint n = nk.x, k = nk.y, group = vk_workgroup_index();
  if (group == 0u) init_state(n, k);
  if (k == 0u || group >= SAMPLES) return;
  // Sample j at floor(j n / taken) = j stride + floor(j rest / taken), spread over the whole input (rest < taken,
  // so j rest fits 32 bits).
  const uint taken = min(WG_SIZE * SAMPLES, n), stride = n / taken, rest = n % taken;
  const uint j = group * WG_SIZE + gl_LocalInvocationIndex;
  if (j >= taken) return;
  const uvec2 c = composite(keys[pc.keys_shift + j * stride + j * rest / taken], 0u).xy;
#if defined(VKPRIM_KEY64)
  state[ST_SAMPLES + 2u * j] = c.x;
  state[ST_SAMPLES + 2u * j + 1u] = c.y;
#else
  state[ST_SAMPLES + j] = c.y;
#endif
}

// The rank (1-based) among `taken` samples of n keys whose ordered key is the threshold: mu samples are
// expected below the k-th key, and the rank stands SAMPLE_SIGMAS standard deviations and SAMPLE_SLACK above
// (src/topk.cpp, kSample, says why).
uint sample_rank(uint taken, uint n, uint k) {
  const float mu = float(taken) * (float(k) / float(n));
  const float rank = ceil(mu + float(SAMPLE_SIGMAS) * sqrt(mu) + float(SAMPLE_SLACK));
  return uint(clamp(rank, 1.0, float(taken)));
}

// A sample's ordered key as a composite with index 0.
uvec3 sample_composite(KEY_T key) {
#if defined(VKPRIM_KEY64)
  return uvec3(key, 0u);
#else
  return uvec3(0u, key, 0u);
#endif
}

// One workgroup: radix select of the threshold among the samples' ordered keys (the composite's key words,
// index 0), digits of the key only. The samples (written by the sample pass) through the non-coherent view,
// all loaded before any is used (past `taken`, the last again, not counted). The loops over them stay rolled
// (the array in local memory; their trip count the rounds that hold samples, unknown to the compiler, which
// unrolls a loop of constant count whatever the attribute): this pass runs once on one multiprocessor, after
// the sieve of the record before has streamed the input through L2, so unrolled code is fetched from memory
// as it runs.
void sample_threshold() {
  const uint n = state[ST_COUNT], k = state[ST_SELECTED];  // the same words for the whole workgroup: uniform
  if (k == 0u) return;
  const uint t = gl_LocalInvocationIndex;
  const uint taken = min(WG_SIZE * SAMPLES, n);
  KEY_T sample_keys[SAMPLES];  // ordered keys (for 64-bit keys: high word, low word)
  [[unroll]] for (uint s = 0u; s < SAMPLES; ++s) {
    const uint j = min(s * WG_SIZE + t, taken - 1u);
#if defined(VKPRIM_KEY64)
    sample_keys[s] = uvec2(state_in[ST_SAMPLES + 2u * j], state_in[ST_SAMPLES + 2u * j + 1u]);
#else
    sample_keys[s] = state_in[ST_SAMPLES + j];
#endif
  }
  const uint rounds = (taken + WG_SIZE - 1u) / WG_SIZE;  // at most SAMPLES
  uvec3 p = uvec3(0u);
  uint remaining = sample_rank(taken, n, k);
  [[dont_unroll]] for (uint decided = 8u * FIRST_PASS; decided < 64u; decided += 8u) {
    clear_counts();
    [[dont_unroll]] for (uint s = 0u; s < rounds; ++s) {
      const uvec3 c = sample_composite(sample_keys[s]);
      if (s * WG_SIZE + t < taken && cut(c, decided) == p) atomicAdd(s_counts[digit_at(c, decided)], 1u);
    }
    barrier();
    choose_bucket(remaining);
    p = with_digit(p, decided, s_choice[0]);
    remaining -= s_choice[1];
    const uint in_bucket = s_choice[2];
    if (in_bucket > WG_SIZE || decided + 8u >= 64u) continue;  // the same words for the whole workgroup
    // A bucket of at most WG_SIZE samples: gathered to shared memory, one per invocation, and the value of
    // rank `remaining` among them found by counting (ties: every holder of it writes the same words).
    barrier();  // every invocation has read s_choice
    if (t == 0u) s_staged = 0u;
    barrier();
    [[dont_unroll]] for (uint s = 0u; s < rounds; ++s) {
      const uvec3 c = sample_composite(sample_keys[s]);
      if (s * WG_SIZE + t < taken && cut(c, decided + 8u) == p) {
        const uint slot = atomicAdd(s_staged, 1u);
        s_stage[slot * 2u] = c.x;
        s_stage[slot * 2u + 1u] = c.y;
      }
    }
    barrier();
    if (t < in_bucket) {
      const uvec2 mine = uvec2(s_stage[t * 2u], s_stage[t * 2u + 1u]);
      uint below = 0u, at_or_below = 0u;
      [[dont_unroll]] for (uint j = 0u; j < in_bucket; ++j) {
        const uvec2 other = uvec2(s_stage[j * 2u], s_stage[j * 2u + 1u]);
        const bool less = other.x < mine.x || (other.x == mine.x && other.y < mine.y);
        below += less ? 1u : 0u;
        at_or_below += less || other == mine ? 1u : 0u;
      }
      if (below < remaining && remaining <= at_or_below) {
        s_words[2] = mine.x;
        s_words[3] = mine.y;
      }
    }
    barrier();
    p = uvec3(s_words[2], s_words[3], 0u);
    break;
  }
  if (t == 0u) {
    state[ST_THRESHOLD] = p.x;
    state[ST_THRESHOLD + 1u] = p.y;
    // The candidates share the threshold's leading zero bits: the refine's first digit follows them.
    const uint zeros = p.x != 0u ? 31u - uint(findMSB(p.x)) : p.y != 0u ? 63u - uint(findMSB(p.y)) : 64u;
    state[ST_SIEVE_DIGIT] = min(zeros, 88u);
  }
}

// ---- the filtering reads of the input (sieve, and the fallback's filter) ----

#define TO_NONE 0u
#define TO_OUT 1u
#define TO_LIST 2u

struct Filter {
  uvec3 prefix;     // sieve: the threshold (key words); filter: the decided prefix
  uint decided;     // sieve: its digit for the histogram; filter: the decided bits
  bool done;        // filter: the first digit's bucket is taken whole
};

// Where the key of input i goes: the sieve lists every key at or below the threshold (and counts its digit);
// the filter selects the keys below the first digit's bucket and lists those in it.
uint classify(const Filter f, KEY_T key, uint i) {
  const uvec3 c = composite(key, i);
  if (PHASE == PHASE_SIEVE) {
    if (!lex_less_equal(uvec3(c.xy, 0u), f.prefix)) return TO_NONE;
    atomicAdd(s_counts[digit_at(c, f.decided)], 1u);
    return TO_LIST;
  }
  const uvec3 head = cut(c, f.decided);
  if (head != f.prefix) return lex_less_equal(head, f.prefix) ? TO_OUT : TO_NONE;
  if (f.done) return TO_OUT;
  atomicAdd(s_counts[digit_at(c, f.decided)], 1u);  // the filter counts the next digit of what it lists
  return TO_LIST;
}

KEY_T vector_key(uvec4 v, uint e) {
#if defined(VKPRIM_KEY64)
  return e == 0u ? v.xy : v.zw;
#else
  return v[e];
#endif
}

// The sieve's listing: staged in shared memory (a shared atomic per listed key, no barrier per tile), flushed
// to the list with one global atomic per workgroup at its end (flush_stage); past the stage's room, a global
// atomic per key. The list's counter counts every listed key; only those below pc.capacity are written.
void stage_entry(KEY_T key, uint index) {
  const uint slot = atomicAdd(s_staged, 1u);
  if (slot < STAGE_ENTRIES) {
#if defined(VKPRIM_KEY64)
    s_stage[slot * 3u] = key.x;
    s_stage[slot * 3u + 1u] = key.y;
    s_stage[slot * 3u + 2u] = index;
#else
    s_stage[slot * 2u] = key;
    s_stage[slot * 2u + 1u] = index;
#endif
    return;
  }
  const uint at = atomicAdd(state[ST_CANDIDATES], 1u);
  if (at < pc.capacity) write_entry(0u, at, key, index);
}

// Every invocation, after its last stage_entry.
void flush_stage() {
  const uint t = gl_LocalInvocationIndex;
  barrier();
  const uint staged = min(s_staged, STAGE_ENTRIES);
  if (t == 0u) s_words[2] = staged == 0u ? 0u : atomicAdd(state[ST_CANDIDATES], staged);
  barrier();
  const uint base = s_words[2];
  for (uint i = t; i < staged && base + i < pc.capacity; i += WG_SIZE) {
#if defined(VKPRIM_KEY64)
    write_entry(0u, base + i, uvec2(s_stage[i * 3u], s_stage[i * 3u + 1u]), s_stage[i * 3u + 2u]);
#else
    write_entry(0u, base + i, s_stage[i * 2u], s_stage[i * 2u + 1u]);
#endif
  }
}

// The sieve's test of one loaded vector: whether any of its keys lies at or below the threshold. Almost no
// vector holds one (about r / S of the keys are listed: src/topk.cpp, kSample), so the per-key work of
// classify (the composite with its index, the compares, the masks) is skipped for the rest.
bool sieve_may_list(const Filter f, uvec4 v) {
#if defined(VKPRIM_KEY64)
  return lex_less_equal(uvec3(composite(v.xy, 0u).xy, 0u), f.prefix) ||
         lex_less_equal(uvec3(composite(v.zw, 0u).xy, 0u), f.prefix);
#else
  // A 32-bit key's composite has a high word of 0: it lies at or below the threshold when its ordered word does.
  const uvec4 ordered = uvec4(composite(v.x, 0u).y, composite(v.y, 0u).y, composite(v.z, 0u).y, composite(v.w, 0u).y);
  return f.prefix.x != 0u || any(lessThanEqual(ordered, uvec4(f.prefix.y)));
#endif
}

// Key j * VECTOR_KEYS + e of an invocation's tile: element e of its vector j, input first + j * spacing + e.
// Kept as the vectors, not as keys and indices, so that a tile costs the registers of its loads.
// Sends the keys where classify said (mask bit j * VECTOR_KEYS + e: out_mask to the output, list_mask to the
// list), with one reservation for the tile.
void send_keys(uvec4 v[TILE_VECTORS], uint first, uint spacing, uint out_mask, uint list_mask, uint parity) {
  const uvec2 slot = reserve_slots(uvec2(bitCount(out_mask), bitCount(list_mask)), parity, ST_CANDIDATES);
  uint out_at = slot.x, list_at = slot.y;
  [[unroll]] for (uint j = 0u; j < TILE_VECTORS; ++j) {
    [[unroll]] for (uint e = 0u; e < VECTOR_KEYS; ++e) {
      const uint bit = 1u << (j * VECTOR_KEYS + e);
      if (((out_mask | list_mask) & bit) == 0u) continue;
      const KEY_T key = vector_key(v[j], e);
      const uint index = first + j * spacing + e;
      if ((out_mask & bit) != 0u) append_selected(key, index, out_at++);
      else {
        if (list_at < pc.capacity) write_entry(0u, list_at, key, index);
        ++list_at;
      }
    }
  }
}

// The input in tiles of WG_SIZE * TILE_VECTORS 16-byte vectors (coalesced: vector j of an invocation at
// j * WG_SIZE + its index), grid stride; the keys before the binding's first 16-byte boundary and after the
// last whole vector (at most 2 * (VECTOR_KEYS - 1)) in one more round of scalar loads by workgroup 0.
void filter_input(const Filter f) {
  const uint group = vk_workgroup_index(), t = gl_LocalInvocationIndex;
  const uint n = state[ST_COUNT];
  const uint head = min((VECTOR_KEYS - pc.keys_shift % VECTOR_KEYS) % VECTOR_KEYS, n);
  const uint vectors = (n - head) / VECTOR_KEYS, first_vector = (pc.keys_shift + head) / VECTOR_KEYS;
  const uint tail = n - head - vectors * VECTOR_KEYS;
  const uint per_tile = WG_SIZE * TILE_VECTORS, tiles = (vectors + per_tile - 1u) / per_tile;
  start_slots();
  uint parity = 0u;
  uvec4 v[TILE_VECTORS];
  for (uint tile = group; tile < tiles; tile += pc.groups) {
    const uint q0 = tile * per_tile + t;  // this invocation's first vector of the tile
    // A whole tile (all but the last): every load unconditional, all in flight before any compare.
    if (tile * per_tile + per_tile <= vectors) {
      [[unroll]] for (uint j = 0u; j < TILE_VECTORS; ++j) v[j] = key_vectors[first_vector + q0 + j * WG_SIZE];
    } else {
      [[unroll]] for (uint j = 0u; j < TILE_VECTORS; ++j)
        v[j] = key_vectors[first_vector + min(q0 + j * WG_SIZE, vectors - 1u)];
    }
    const uint first = head + q0 * VECTOR_KEYS, spacing = WG_SIZE * VECTOR_KEYS;
    uint out_mask = 0u, list_mask = 0u;
    [[unroll]] for (uint j = 0u; j < TILE_VECTORS; ++j) {
      if (q0 + j * WG_SIZE >= vectors) continue;
      if (PHASE == PHASE_SIEVE && !sieve_may_list(f, v[j])) continue;
      [[unroll]] for (uint e = 0u; e < VECTOR_KEYS; ++e) {
        const uint to = classify(f, vector_key(v[j], e), first + j * spacing + e);
        // The sieve stages each listed key at once (no barrier; the tile's vectors never leave registers).
        if (PHASE == PHASE_SIEVE && to == TO_LIST) stage_entry(vector_key(v[j], e), first + j * spacing + e);
        out_mask |= to == TO_OUT ? 1u << (j * VECTOR_KEYS + e) : 0u;
        list_mask |= to == TO_LIST ? 1u << (j * VECTOR_KEYS + e) : 0u;
      }
    }
    if (PHASE != PHASE_SIEVE) send_keys(v, first, spacing, out_mask, list_mask, parity);
    parity ^= 1u;
  }
  // The scalar keys: invocation t of workgroup 0 takes the head's key t, then the tail's.
  uint out_mask = 0u, list_mask = 0u, index = 0u;
  if (group == 0u && t < head + tail) {
    index = t < head ? t : head + vectors * VECTOR_KEYS + (t - head);
    const KEY_T key = keys[pc.keys_shift + index];
#if defined(VKPRIM_KEY64)
    v[0] = uvec4(key, 0u, 0u);
#else
    v[0] = uvec4(key, 0u, 0u, 0u);
#endif
    const uint to = classify(f, key, index);
    if (PHASE == PHASE_SIEVE && to == TO_LIST) stage_entry(key, index);
    out_mask = to == TO_OUT ? 1u : 0u;
    list_mask = to == TO_LIST ? 1u : 0u;
  }
  if (PHASE != PHASE_SIEVE) send_keys(v, index, 0u, out_mask, list_mask, parity);
}

void sieve() {
  if (state[ST_SELECTED] == 0u) return;  // the same word for the whole workgroup: uniform
  if (vk_workgroup_index() >= pc.groups) return;
  Filter f;
  f.prefix = uvec3(state[ST_THRESHOLD], state[ST_THRESHOLD + 1u], 0u);
  f.decided = state[ST_SIEVE_DIGIT];
  f.done = false;
  if (gl_LocalInvocationIndex == 0u) s_staged = 0u;
  clear_counts();
  filter_input(f);
  flush_stage();
  barrier();
  for (uint d = gl_LocalInvocationIndex; d < 256u; d += WG_SIZE)
    if (s_counts[d] != 0u) atomicAdd(state[ST_COUNTS + d], s_counts[d]);
}

// After the fallback's first digit: the keys below its bucket are selected, those in it (unless the whole
// bucket is taken) become the candidates of the later passes, in whatever order the atomics give (the index
// travels).
void add_counts_and_choose();

void filter_keys() {
  if (state[ST_SELECTED] == 0u) return;
  if (vk_workgroup_index() >= pc.groups) return;
  Filter f;
  f.prefix = prefix();
  f.decided = state[ST_DECIDED];
  f.done = state[ST_DONE] != 0u;
  clear_counts();
  filter_input(f);
  // The next digit's pass, merged (pc.pass is its digit): its counts added, its last workgroup chooses.
  if (!f.done) add_counts_and_choose();
}

// ---- refine ----

// LOAD_BATCH: entries base + u * WG_SIZE + (this invocation) of a list of m >= 1, u < REFINE_BATCH, into the
// caller's arrays, all loaded before any is used: unconditional loads (past m, the last entry again; the callers
// skip those), so that the batch is in flight at once (one workgroup: latency, not bandwidth, bounds it). A
// macro, not a function: array parameters are copies, which may live in local memory. The lists are written
// in the same dispatch (by the split's workgroups, or this one's earlier round): the coherent view.
#define LOAD_BATCH(list, base, m, key, index)                                                                 \
  [[unroll]] for (uint u = 0u; u < REFINE_BATCH; ++u)                                                         \
    read_entry(list, min(base + u * WG_SIZE + gl_LocalInvocationIndex, m - 1u), key[u], index[u]);

// Writes the fallback's dispatch arguments (its grid; zero workgroups on the sample path).
void write_fallback_args(bool run) {
  // Binding 5, in the refine: the arguments' range of scratch (src/topk.cpp), outside the state binding.
  out_values[pc.out_values_shift] = run ? pc.fallback_groups : 0u;
  out_values[pc.out_values_shift + 1u] = 1u;
  out_values[pc.out_values_shift + 2u] = 1u;
}

// Where k <= listed <= pc.capacity (the sample path): the first digit's bucket, chosen from the sieve's
// counts (every caller alike, in s_choice); false elsewhere.
bool choose_first_bucket(out uint k) {
  k = state_in[ST_SELECTED];
  const uint listed = state_in[ST_CANDIDATES];
  if (k == 0u || listed < k || listed > pc.capacity) return false;
  for (uint d = gl_LocalInvocationIndex; d < 256u; d += WG_SIZE) s_counts[d] = state_in[ST_COUNTS + d];
  barrier();
  choose_bucket(k);
  return true;
}

// The split's direct list (TOPK_RANKED): the entries below the first digit's bucket and those in it to the rank
// list, where they fit, for the rank pass to keep the k smallest; every split workgroup decides alike.
bool direct_rank(uint before, uint in_bucket) {
  return (pc.flags & TOPK_RANKED) != 0u && before + in_bucket <= RANK_UNION_MAX;
}

// Grid stride over the sieve's list, on the sample path: the entries below the first digit's bucket (and the
// bucket's, when it is taken whole) appended to the output, those in it to list 1 (counter ST_NEXT), slots
// reserved per tile with one global atomic per counter and workgroup. Many workgroups: one's stores (the
// output's, scattered) would bound the refine at large k.
void split_entries() {
  const uint group = vk_workgroup_index(), t = gl_LocalInvocationIndex;
  uint k;
  if (!choose_first_bucket(k)) return;  // the same words for the whole workgroup: uniform
  g_selected = k;
  const uint listed = state_in[ST_CANDIDATES], decided = state_in[ST_SIEVE_DIGIT];
  const uint bucket = s_choice[0], before = s_choice[1], in_bucket = s_choice[2];
  // Taken whole: the bucket's entries are all selected, or (direct) all go to the rank list.
  const bool whole = in_bucket == k - before || direct_rank(before, in_bucket);
  if (whole) g_selected = before + in_bucket;
  start_slots();
  uint parity = 0u;
  for (uint base = group * WG_SIZE * SPLIT_ITEMS; base < listed; base += pc.groups * WG_SIZE * SPLIT_ITEMS) {
    KEY_T key[SPLIT_ITEMS];
    uint index[SPLIT_ITEMS];
    [[unroll]] for (uint u = 0u; u < SPLIT_ITEMS; ++u)
      read_entry_in(0u, min(base + u * WG_SIZE + t, listed - 1u), key[u], index[u]);
    uint out_mask = 0u, list_mask = 0u;
    [[unroll]] for (uint u = 0u; u < SPLIT_ITEMS; ++u) {
      const uint d = digit_at(composite(key[u], index[u]), decided);
      const bool live = base + u * WG_SIZE + t < listed;
      out_mask |= live && (d < bucket || (whole && d == bucket)) ? 1u << u : 0u;
      list_mask |= live && !whole && d == bucket ? 1u << u : 0u;
    }
    const uvec2 slot = reserve_slots(uvec2(bitCount(out_mask), bitCount(list_mask)), parity, ST_NEXT);
    parity ^= 1u;
    uint out_at = slot.x, list_at = slot.y;
    [[unroll]] for (uint u = 0u; u < SPLIT_ITEMS; ++u) {
      if ((out_mask & (1u << u)) != 0u) append_selected(key[u], index[u], out_at++);
      else if ((list_mask & (1u << u)) != 0u) write_entry(pc.capacity, list_at++, key[u], index[u]);
    }
  }
}

// The refine's end once its list holds at most 2 WG_SIZE entries (m >= remaining): entries t and t + WG_SIZE per
// invocation, their composites to shared memory, and each one's rank among them counted (composites are
// distinct); the `remaining` smallest appended at the output's slot s_tally[0] + rank (no atomics).
// RANK_UNROLL entries per trip of the count, their shared loads independent: one workgroup's few subgroups
// hide little latency, so a trip per entry waits on each load in turn. The list is padded to a multiple of
// RANK_UNROLL with the largest composite, which counts below nothing (an index never reaches 2^32 - 1).
#define RANK_UNROLL 4u
void rank_finish(uint list, uint m, uint remaining) {
  const uint t = gl_LocalInvocationIndex;
  KEY_T key[2];
  uint index[2];
  uvec3 c[2];
  [[unroll]] for (uint h = 0u; h < 2u; ++h) {
    const uint i = t + h * WG_SIZE;
    index[h] = 0u;
    c[h] = uvec3(0xFFFFFFFFu);
    if (i < m) {
      read_entry(list, i, key[h], index[h]);
      c[h] = composite(key[h], index[h]);
    }
    if (i < (m + RANK_UNROLL - 1u) / RANK_UNROLL * RANK_UNROLL) {
      s_stage[i * 3u] = c[h].x;
      s_stage[i * 3u + 1u] = c[h].y;
      s_stage[i * 3u + 2u] = c[h].z;
    }
  }
  barrier();
  uvec2 rank = uvec2(0u);
  for (uint j = 0u; j < m; j += RANK_UNROLL) {
    uvec3 other[RANK_UNROLL];
    [[unroll]] for (uint q = 0u; q < RANK_UNROLL; ++q)
      other[q] = uvec3(s_stage[(j + q) * 3u], s_stage[(j + q) * 3u + 1u], s_stage[(j + q) * 3u + 2u]);
    [[unroll]] for (uint q = 0u; q < RANK_UNROLL; ++q) {
      rank.x += lex_less_equal(c[0], other[q]) ? 0u : 1u;
      rank.y += lex_less_equal(c[1], other[q]) ? 0u : 1u;
    }
  }
  if (t < m && rank.x < remaining) append_selected(key[0], index[0], s_tally[0] + rank.x);
  if (t + WG_SIZE < m && rank.y < remaining) append_selected(key[1], index[1], s_tally[0] + rank.y);
}

// One workgroup. The lists: list 0 (the sieve's) and list pc.capacity (entries), used in turn; the split
// pass has taken the first digit (list 1 holds its bucket).
void refine() {
  const uint t = gl_LocalInvocationIndex;
  const uint k = state[ST_SELECTED], listed = state[ST_CANDIDATES];
  g_selected = k;
  const bool sample_path = k != 0u && listed >= k && listed <= pc.capacity;
  barrier();  // every invocation has read the list's count before it is cleared for the fallback
  if (t == 0u) {
    write_fallback_args(k != 0u && !sample_path);
    state[ST_PATH] = k == 0u ? PATH_NONE : sample_path ? PATH_SAMPLE : PATH_FALLBACK;
    state[ST_RANK_COUNT] = k;  // the rank pass's list: the k selected, or the split's direct list
  }
  if (!sample_path) {
    // The fallback starts as after init: its counts and its list counter cleared.
    for (uint d = t; d < 256u; d += WG_SIZE) state[ST_COUNTS + d] = 0u;
    if (t == 0u) state[ST_CANDIDATES] = 0u;
    return;
  }
  // The split's choice (s_choice, this workgroup's own): done when it took the bucket whole; else its bucket
  // (list 1) is the list, and the `before` entries below it are in the output.
  const uint first_before = s_choice[1], first_in = s_choice[2];
  if (direct_rank(first_before, first_in)) {  // uniform
    if (t == 0u) state[ST_RANK_COUNT] = first_before + first_in;
    return;
  }
  if (first_in == k - first_before) return;  // the split took the bucket whole: uniform
  barrier();  // every invocation has read s_choice
  if (t == 0u) {
    s_tally[0] = first_before;  // the output's slots
    s_tally[1] = 0u;            // the next list's
  }
  uint decided = min(state[ST_SIEVE_DIGIT] + 8u, 88u), remaining = k - first_before, m = first_in;
  uint from = pc.capacity, to = 0u;
  for (;;) {
    if (m <= 2u * WG_SIZE) {  // the same words for the whole workgroup: uniform
      rank_finish(from, m, remaining);
      break;
    }
    clear_counts();
    for (uint base = 0u; base < m; base += WG_SIZE * REFINE_BATCH) {
      KEY_T key[REFINE_BATCH];
      uint index[REFINE_BATCH];
      LOAD_BATCH(from, base, m, key, index)
      [[unroll]] for (uint u = 0u; u < REFINE_BATCH; ++u)
        if (base + u * WG_SIZE + t < m) atomicAdd(s_counts[digit_at(composite(key[u], index[u]), decided)], 1u);
    }
    barrier();
    choose_bucket(remaining);
    const uint bucket = s_choice[0], before = s_choice[1], in_bucket = s_choice[2];
    const bool whole = in_bucket == remaining - before;  // the rank within the bucket is its last
    if (!whole && in_bucket == m) {  // one bucket holds the list: nothing to move
      decided = min(decided + 8u, 88u);
      continue;
    }
    // Below the bucket (and the bucket when taken whole): the output; the bucket: the next list.
    for (uint base = 0u; base < m; base += WG_SIZE * REFINE_BATCH) {
      KEY_T key[REFINE_BATCH];
      uint index[REFINE_BATCH];
      LOAD_BATCH(from, base, m, key, index)
      // Bit u: entry u goes to the output (out_mask) or the next list (list_mask); one shared atomic per
      // invocation and batch for each.
      uint out_mask = 0u, list_mask = 0u;
      [[unroll]] for (uint u = 0u; u < REFINE_BATCH; ++u) {
        const uint d = digit_at(composite(key[u], index[u]), decided);
        const bool live = base + u * WG_SIZE + t < m;
        out_mask |= live && (d < bucket || (whole && d == bucket)) ? 1u << u : 0u;
        list_mask |= live && !whole && d == bucket ? 1u << u : 0u;
      }
      uint out_at = out_mask != 0u ? atomicAdd(s_tally[0], bitCount(out_mask)) : 0u;
      uint list_at = list_mask != 0u ? atomicAdd(s_tally[1], bitCount(list_mask)) : 0u;
      [[unroll]] for (uint u = 0u; u < REFINE_BATCH; ++u) {
        if ((out_mask & (1u << u)) != 0u) append_selected(key[u], index[u], out_at++);
        else if ((list_mask & (1u << u)) != 0u) write_entry(to, list_at++, key[u], index[u]);
      }
    }
    if (whole) break;
    memoryBarrierBuffer();
    barrier();
    if (t == 0u) s_tally[1] = 0u;
    remaining -= before;
    m = in_bucket;
    const uint next = from;
    from = to;
    to = next;
    decided = min(decided + 8u, 88u);
  }
}

// The split over many workgroups, then the refine by the one that takes the last ticket (no workgroup waits):
// each workgroup's list entries made visible before its ticket, read by the last after its own.
void split_list() {
  if (vk_workgroup_index() >= pc.groups) return;
  split_entries();
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationIndex == 0u) s_words[0] = atomicAdd(state[ST_SPLIT_TICKET], 1u);
  barrier();
  if (s_words[0] != pc.groups - 1u) return;  // not the last: uniform
  memoryBarrierBuffer();
  refine();
}

// ---- the fallback's digit passes ----

// Element i of a fallback pass's source: the input, or the candidate list; its key and input index.
void source_at(bool candidates, uint i, out KEY_T key, out uint index) {
  index = i;
  if (candidates) read_entry(0u, i, key, index);
  else key = keys[pc.keys_shift + i];
}

// The last workgroup of a count pass: the counts (complete) to shared memory, cleared for the next pass, and
// the bucket of the remaining rank taken into the prefix.
void choose_digit() {
  const uint t = gl_LocalInvocationIndex;
  for (uint d = t; d < 256u; d += WG_SIZE) {
    s_counts[d] = state[ST_COUNTS + d];
    state[ST_COUNTS + d] = 0u;
  }
  barrier();
  const uint remaining = state[ST_REMAINING];
  choose_bucket(remaining);
  if (t != 0u) return;
  const uint d = s_choice[0], rank = remaining - s_choice[1];
  state[ST_PREFIX + pc.pass / 4u] |= d << (24u - 8u * (pc.pass % 4u));
  state[ST_REMAINING] = rank;
  state[ST_DECIDED] = 8u * (pc.pass + 1u);
  state[ST_TICKET] = 0u;
  if (s_choice[2] == rank) state[ST_DONE] = 1u;  // else, after the last key digit, the tally
}

// After a workgroup's counts of digit pc.pass (s_counts): added to the state's; the workgroup that adds them
// last (its ticket) chooses the digit.
void add_counts_and_choose() {
  const uint t = gl_LocalInvocationIndex;
  barrier();
  for (uint d = t; d < 256u; d += WG_SIZE)
    if (s_counts[d] != 0u) atomicAdd(state[ST_COUNTS + d], s_counts[d]);
  memoryBarrierBuffer();
  barrier();
  if (t == 0u) s_words[0] = atomicAdd(state[ST_TICKET], 1u);
  barrier();
  if (s_words[0] != pc.groups - 1u) return;  // not the last: uniform
  memoryBarrierBuffer();
  choose_digit();
}

void count_digits() {
  if (state[ST_DONE] != 0u) return;  // the same word for the whole workgroup: uniform
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  clear_counts();
  const uint decided = 8u * pc.pass;
  const uvec3 p = prefix();
  const bool candidates = (pc.flags & TOPK_CANDIDATES) != 0u && pc.pass > FIRST_PASS;
  const uint n = state[candidates ? ST_CANDIDATES : ST_COUNT];
  for (uint i = group * WG_SIZE + t; i < n; i += pc.groups * WG_SIZE) {
    KEY_T key;
    uint index;
    source_at(candidates, i, key, index);
    const uvec3 c = composite(key, index);
    if (cut(c, decided) == p) atomicAdd(s_counts[digit_at(c, decided)], 1u);
  }
  add_counts_and_choose();
}

// ---- the fallback's ties: the earliest of the keys equal to the k-th ----

// The chunk of the input that a workgroup of the fallback's grid owns in the tally and the select after it:
// contiguous, in index order, whole workgroup tiles (n is at most one binding of keys, 2^30, so no wrap).
uvec2 tie_chunk(uint n) {
  const uint size = ((n + pc.groups - 1u) / pc.groups + WG_SIZE - 1u) / WG_SIZE * WG_SIZE;
  const uint begin = min(vk_workgroup_index() * size, n);
  return uvec2(begin, min(begin + size, n));
}

// After the last key digit, where the keys equal to the k-th composite's key K outnumber the rank left: the
// count of them in each workgroup's chunk, to the samples' words (unused by the fallback).
void tally_ties() {
  if (state[ST_DONE] != 0u) return;  // the same word for the whole workgroup: uniform
  if (vk_workgroup_index() >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  const uvec3 p = prefix();
  const uvec2 chunk = tie_chunk(state[ST_COUNT]);
  uint equal = 0u;
  for (uint i = chunk.x + t; i < chunk.y; i += WG_SIZE)
    equal += cut(composite(keys[pc.keys_shift + i], i), 64u) == p ? 1u : 0u;
  if (t == 0u) s_words[1] = 0u;
  barrier();
  if (equal != 0u) atomicAdd(s_words[1], equal);
  barrier();
  if (t == 0u) state[ST_SAMPLES + vk_workgroup_index()] = s_words[1];
}

// Keys per invocation per tile of select_ties, consecutive: the invocations' counts in index order.
#define TIE_ITEMS 8u

// The select after a tally: each workgroup's chunk of the input in tiles, every key below K that no earlier pass
// appended (with the candidate list the filter took those below the first digit's bucket), and of the keys equal
// to K the earliest, ST_REMAINING of them in all: those before the chunk are the tallies of the chunks before it,
// and in the one tile that holds the last, choose_bucket over the invocations' counts finds the invocation.
void select_ties() {
  const uint t = gl_LocalInvocationIndex, group = vk_workgroup_index();
  const uvec3 p = prefix();
  const uint first_bits = (pc.flags & TOPK_CANDIDATES) != 0u ? 8u * (FIRST_PASS + 1u) : 0u;
  const uvec3 bucket = cut(p, first_bits);
  const uvec2 chunk = tie_chunk(state[ST_COUNT]);
  const uint rank = state[ST_REMAINING];
  uint before = 0u;
  for (uint c = t; c < group; c += WG_SIZE) before += state_in[ST_SAMPLES + c];
  if (t == 0u) s_words[1] = 0u;
  barrier();
  if (before != 0u) atomicAdd(s_words[1], before);
  barrier();
  uint need = rank - min(s_words[1], rank);  // the keys equal to K this chunk and the later ones still take
  start_slots();
  uint parity = 0u;
  for (uint base = chunk.x; base < chunk.y; base += WG_SIZE * TIE_ITEMS) {
    KEY_T key[TIE_ITEMS];
    uint below = 0u, equal = 0u;
    [[unroll]] for (uint u = 0u; u < TIE_ITEMS; ++u) {
      const uint i = base + t * TIE_ITEMS + u;
      if (i >= chunk.y) continue;
      key[u] = keys[pc.keys_shift + i];
      const uvec3 c = composite(key[u], i), head = cut(c, 64u);
      if (head == p) equal |= 1u << u;
      else if (cut(c, first_bits) == bucket && lex_less_equal(head, p)) below |= 1u << u;
    }
    // This invocation's quota of its keys equal to K: all of them before the invocation that holds the last.
    const uint mine = bitCount(equal);
    if (t == 0u) s_words[2] = 0u;
    for (uint d = t; d < 256u; d += WG_SIZE) s_counts[d] = d == t ? mine : 0u;
    barrier();
    if (mine != 0u) atomicAdd(s_words[2], mine);
    barrier();
    const uint total = s_words[2];
    uint quota = 0u;
    if (need >= total) {  // the same words for the whole workgroup: uniform
      quota = mine;
    } else if (need != 0u) {
      choose_bucket(need);
      quota = t < s_choice[0] ? mine : t == s_choice[0] ? need - s_choice[1] : 0u;
    }
    need -= min(need, total);
    uint take = below;
    for (uint q = 0u; q < quota; ++q) {
      take |= equal & (~equal + 1u);  // the lowest, the earliest
      equal &= equal - 1u;
    }
    uint slot = reserve_slots(uvec2(bitCount(take), 0u), parity, ST_CANDIDATES).x;
    parity ^= 1u;
    [[unroll]] for (uint u = 0u; u < TIE_ITEMS; ++u)
      if ((take & (1u << u)) != 0u) append_selected(key[u], base + t * TIE_ITEMS + u, slot++);
  }
}

void select_keys() {
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint decided = state[ST_DECIDED];
  const uvec3 p = prefix();
  const bool candidates = (pc.flags & TOPK_CANDIDATES) != 0u;
  const uint n = state[candidates ? ST_CANDIDATES : ST_COUNT];
  if (state[ST_SELECTED] == 0u) return;
  if (state[ST_DONE] == 0u) {  // the same word for the whole workgroup: uniform
    select_ties();
    return;
  }
  start_slots();
  uint parity = 0u;
  // The loop's bounds are the workgroup's (reserve_slots has barriers).
  for (uint base = group * WG_SIZE; base < n; base += pc.groups * WG_SIZE) {
    const uint i = base + gl_LocalInvocationIndex;
    KEY_T key;
    uint index;
    bool selected = false;
    if (i < n) {
      source_at(candidates, i, key, index);
      selected = lex_less_equal(cut(composite(key, index), decided), p);
    }
    const uint slot = reserve_slots(uvec2(selected ? 1u : 0u, 0u), parity, ST_CANDIDATES).x;
    parity ^= 1u;
    if (selected) append_selected(key, index, slot);
  }
}

// ---- rank: the sorted output of a selection of at most RANK_MAX (TOPK_RANKED) ----
// The rank list holds ST_RANK_COUNT entries, at most RANK_UNION_MAX: the k selected, or the split's direct list
// (every entry up to the end of the first digit's bucket; the k smallest are kept). The direct list spares the
// refine, a one-workgroup latency chain whose time varied by 3x between records.
// Each entry's rank is the number of the list's composites below it (they are distinct), counted by RANK_LANES
// invocations over a share of the list each: WG_SIZE / RANK_LANES entries per workgroup, the whole list through
// shared memory RANK_MAX at a time in every workgroup. At these sizes the counts cost less than a sort of the
// selection, whose one-workgroup passes run cold after the sieve (see sample_threshold).
#define RANK_LANES 16u
#define RANK_MAX STAGE_ENTRIES  // composites in s_stage at a time, CAND_WORDS words each

// The words of composite i in s_stage: a 32-bit key's high word is 0 and not kept.
void stage_composite(uint i, uvec3 c) {
#if defined(VKPRIM_KEY64)
  s_stage[i * 3u] = c.x;
  s_stage[i * 3u + 1u] = c.y;
  s_stage[i * 3u + 2u] = c.z;
#else
  s_stage[i * 2u] = c.y;
  s_stage[i * 2u + 1u] = c.z;
#endif
}

uvec3 staged_composite(uint i) {
#if defined(VKPRIM_KEY64)
  return uvec3(s_stage[i * 3u], s_stage[i * 3u + 1u], s_stage[i * 3u + 2u]);
#else
  return uvec3(0u, s_stage[i * 2u], s_stage[i * 2u + 1u]);
#endif
}

void rank_selected() {
  const uint k = state_in[ST_SELECTED], t = gl_LocalInvocationIndex;
  const uint u = min(state_in[ST_RANK_COUNT], RANK_UNION_MAX);
  const uint per_group = WG_SIZE / RANK_LANES, first = vk_workgroup_index() * per_group;
  if (first >= u) return;  // the same words for the whole workgroup: uniform
  const uint e = first + t % per_group;
  uvec3 mine = uvec3(0u);
  if (e < u) {
    KEY_T key;
    uint index;
    read_entry_in(pc.rank_base, e, key, index);
    mine = composite(key, index);
  }
  if (t < per_group) s_counts[t] = 0u;
  uint below = 0u;
  // The list through shared memory RANK_MAX composites at a time, each lane counting over its share of them.
  for (uint chunk = 0u; chunk < u; chunk += RANK_MAX) {
    const uint size = min(RANK_MAX, u - chunk);
    barrier();  // the previous chunk's counts are done
    for (uint i = t; i < size; i += WG_SIZE) {
      KEY_T key;
      uint index;
      read_entry_in(pc.rank_base, chunk + i, key, index);
      stage_composite(i, composite(key, index));
    }
    barrier();
    const uint share = (size + RANK_LANES - 1u) / RANK_LANES;
    const uint from = (t / per_group) * share, to = min(from + share, size);
    if (e < u)
      for (uint j = from; j < to; ++j) below += lex_less_equal(mine, staged_composite(j)) ? 0u : 1u;
  }
  if (below != 0u) atomicAdd(s_counts[t % per_group], below);
  barrier();
  if (t >= per_group || e >= u) return;
  const uint rank = s_counts[t];
  if (rank >= k) return;  // past the k smallest of the list (the split's direct list holds more)
  KEY_T key;
  uint index;
  read_entry_in(pc.rank_base, e, key, index);
  out_keys[pc.out_shift + rank] = key;
  if ((pc.flags & TOPK_PAIRS) != 0u) out_values[pc.out_values_shift + rank] = values[pc.values_shift + index];
}

void gather_values() {
  const uint group = vk_workgroup_index();
  const uint i = group * WG_SIZE + gl_LocalInvocationIndex;
  if (group >= pc.groups || i >= state[ST_SELECTED]) return;
  out_values[pc.out_values_shift + i] = values[pc.values_shift + indices[pc.index_shift + i]];
}

void main() {
  if (PHASE == PHASE_SELECT || PHASE == PHASE_FILTER) g_selected = state[ST_SELECTED];
  if (PHASE == PHASE_SAMPLE) sample_keys();
  else if (PHASE == PHASE_THRESHOLD) sample_threshold();
  else if (PHASE == PHASE_SPLIT) split_list();
  else if (PHASE == PHASE_HIST) count_digits();
  else if (PHASE == PHASE_SELECT) select_keys();
  else if (PHASE == PHASE_FILTER) filter_keys();
  else if (PHASE == PHASE_SIEVE) sieve();
  else if (PHASE == PHASE_RANK) rank_selected();
  else if (PHASE == PHASE_TALLY) tally_ties();
  else gather_values();
}
