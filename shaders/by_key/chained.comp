#version 460
#if !defined(VKPRIM_BY_KEY_PORTABLE)
#pragma use_vulkan_memory_model
#endif
// The keyed primitives in one pass: ReduceByKey, ScanByKey (inclusive, exclusive), RunLengthEncode,
// NonTrivialRuns and Unique (specialization constant MODE). Runs are maximal stretches of adjacent
// elements with equal keys (bit equality). Each tile summarizes its elements as a run summary
// (common/run_state.glsl: event count, head bit, the value of its trailing partial run) and chains the
// summaries with decoupled look-back (Merrill & Garland 2016) and decoupled fallback (Smith, Levien &
// Owens, SPAA 2025), as shaders/select/chained.comp does for kept counts:
//  1. the tile index comes from an atomic ticket, or from the workgroup index under the launch-order knob;
//  2. invocation tid owns ITEMS consecutive elements of the tile (16-byte loads), compares each key with
//     its neighbours (subgroup shuffles; the first and last lane of a subgroup read the key beyond its
//     elements from memory) for run heads and ends, and folds its elements into a summary in order;
//  3. one workgroup exclusive scan of the invocations' summaries gives each invocation's prefix within the
//     tile and the tile's summary, which is published at once;
//  4. the compacted modes stage their outputs at tile-local ranks in shared memory (stage_round: from
//     the tile's own summaries, so before the look-back where one round holds them);
//  5. subgroup 0 looks back over as many predecessors as it has lanes, combining their summaries up to
//     the first inclusive one; after pc.knobs & 0xFFFF not-ready polls of one predecessor the workgroup
//     summarizes that tile from memory itself (the owner's code and order, so the same bits) and
//     publishes it;
//  6. ScanByKey replays each invocation's elements from its full prefix; every mode writes what it asks,
//     at ranks given by the event count: unique keys (or indices) at run heads, aggregates or lengths at
//     run ends, one scan value per element.
// The last tile writes the event total (runs, or non-trivial runs) to binding 5.
// Events: run heads, except NonTrivialRuns: ends of runs longer than one element. Values: the input
// (ReduceByKey, ScanByKey), a one per element (RunLengthEncode, NonTrivialRuns: lengths under u32 add), or
// none (Unique).
// pc.knobs: fallback spin limit | forced-skip period << 16 (test knob: every k-th tile, never tile 0,
// publishes nothing, so successors must summarize it themselves) | bit 30 launch order | bit 31 no
// look-back statistics.
// Portable variant (VKPRIM_BY_KEY_PORTABLE: no memory model, no tile state, no look-back; src/by_key.cpp's
// reduce_then_scan): three dispatches of this kernel, the phase in specialization constant 8. SUMMARIZE: each
// tile's steps 2-3, then its summary stored in binding 2 (after 16 header words). SCAN: one workgroup replaces
// the summaries by their exclusive prefixes, WG_SIZE x 4 tiles at a time, carrying the running combination.
// REPLAY: each tile's steps 2-3 again, its prefix read from binding 2, then 4 and 6. The pipeline barriers
// between the dispatches order them; no workgroup waits for another.
// Defines: VKPRIM_TYPE_* (values), VKPRIM_KEY64 (keys of two words), VKPRIM_NO_SUBGROUPS,
// VKPRIM_BY_KEY_PORTABLE. Specialization: WG_SIZE (power of two), ITEMS (elements per invocation, a multiple of
// 4, at most 32), PHASE (constant 8, portable variant), MODE (constant 9), VK_OP (constant 5).
// Bindings: 0 keys (u32 words), 1 values, 2 tile state (portable: tile summaries), 3 output A (unique keys,
// indices or run offsets, u32 words), 4 output B (aggregates, lengths or scan values), 5 the event count (u32),
// 6 record_indirect's region (common/indirect.glsl).
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_STATE_U32 1
#define VKPRIM_INDIRECT_BINDING 6
#include "common/config.glsl"
#include "common/types.glsl"
#include "common/subgroup.glsl"
#if !defined(VKPRIM_BY_KEY_PORTABLE)
#include "common/tile_state.glsl"
#endif
#include "common/indirect.glsl"
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#endif

layout(constant_id = 9) const uint MODE = 0u;
#define MODE_REDUCE 0u
#define MODE_SCAN_INCLUSIVE 1u
#define MODE_SCAN_EXCLUSIVE 2u
#define MODE_ENCODE 3u
#define MODE_NON_TRIVIAL 4u
#define MODE_UNIQUE 5u
const bool READS_VALUES = MODE <= MODE_SCAN_EXCLUSIVE;
const bool IS_SCAN = MODE == MODE_SCAN_INCLUSIVE || MODE == MODE_SCAN_EXCLUSIVE;
const bool RUN_HAS_VALUE = MODE != MODE_UNIQUE;
const bool NEEDS_ENDS = MODE == MODE_REDUCE || MODE == MODE_ENCODE || MODE == MODE_NON_TRIVIAL;
#include "common/run_state.glsl"
#if defined(VKPRIM_BY_KEY_PORTABLE)
layout(constant_id = 8) const uint PHASE = 0u;
#define PHASE_SUMMARIZE 0u
#define PHASE_SCAN 1u
#define PHASE_REPLAY 2u
#endif

layout(push_constant) uniform ByKeyConstants {
  uint count;        // elements (direct dispatch); record_indirect reads entry 0 instead
  uint key_shift;    // element shifts of the bindings (src/dispatch.hpp bind_elements)
  uint value_shift;
  uint a_shift;
  uint b_shift;
  uint count_shift;
  uint knobs;
  uint flags;        // BK_* bits
} pc;

#define BK_KEY_VECTORS 1u    // key shift allows 16-byte loads
#define BK_VALUE_VECTORS 2u  // value shift allows 16-byte loads
#define BK_B_VECTORS 4u      // output B shift allows 16-byte stores (scan)
#define BK_INDIRECT 8u       // the count is entry 0 of the indirect region
#define BK_INDICES 16u       // Unique writes u32 input positions instead of keys

layout(set = 0, binding = 0, std430) readonly buffer KeyWords { uint key_words[]; };
layout(set = 0, binding = 0, std430) readonly buffer KeyVectors { uvec4 key_vectors[]; };
layout(set = 0, binding = 1, std430) readonly buffer ValueScalars { VALUE_T in_values[]; };
layout(set = 0, binding = 1, std430) readonly buffer ValueVectors { VEC_T in_vectors[]; };
layout(set = 0, binding = 3, std430) writeonly buffer OutA { uint a_words[]; };
layout(set = 0, binding = 4, std430) writeonly buffer OutB { VALUE_T b_values[]; };
layout(set = 0, binding = 4, std430) writeonly buffer OutBVectors { VEC_T b_vectors[]; };
layout(set = 0, binding = 5, std430) writeonly buffer EventCount { uint count_words[]; };
#if defined(VKPRIM_BY_KEY_PORTABLE)
layout(set = 0, binding = 2, std430) buffer Summaries { uint summary_words[]; };
#endif

#if defined(VKPRIM_KEY64)
#define KEY_T uvec2
#define KEY_WORDS 2u
#else
#define KEY_T uint
#define KEY_WORDS 1u
#endif
#define TILE_ELEMENTS (WG_SIZE * ITEMS)

bool flag_set(uint bit) { return (pc.flags & bit) != 0u; }

KEY_T load_key(uint e) {
  const uint w = (pc.key_shift + e) * KEY_WORDS;
#if defined(VKPRIM_KEY64)
  return uvec2(key_words[w], key_words[w + 1u]);
#else
  return key_words[w];
#endif
}

void store_key(uint index, KEY_T key) {
  const uint w = (pc.a_shift + index) * KEY_WORDS;
#if defined(VKPRIM_KEY64)
  a_words[w] = key.x;
  a_words[w + 1u] = key.y;
#else
  a_words[w] = key;
#endif
}

#if defined(VKPRIM_TYPE_USER)
// User values (VKPRIM_ORDERED): ReduceByKey and ScanByKey only, which read them. Combines keep input order:
// the look-back's lanes hold predecessors nearest first, so their values fold in reverse.
VALUE_T element_value(VALUE_T loaded) { return loaded; }
#define LOOK_REDUCE vk_subgroup_reduce_reversed
#define SHUFFLE_UP_VALUE vk_shuffle_up
#else
VALUE_T element_value(VALUE_T loaded) { return READS_VALUES ? loaded : VALUE_T(1); }
#define LOOK_REDUCE vk_subgroup_reduce
#define SHUFFLE_UP_VALUE subgroupShuffleUp
#endif

// Is element g the event the count tracks, given whether it starts and whether it ends a run?
bool is_event(bool head, bool end) { return MODE == MODE_NON_TRIVIAL ? end && !head : head; }

// ---- The invocation's elements in registers (the owner of a tile) ----

// Loads the keys (and values) of elements base .. base + ITEMS - 1; past n keys read 0 and are unused.
void load_elements(uint base, uint n, out KEY_T keys[ITEMS], out VALUE_T values[ITEMS]) {
  const bool full = base + ITEMS <= n;
  if (full && flag_set(BK_KEY_VECTORS)) {
    const uint first = (pc.key_shift + base) * KEY_WORDS / 4u;
    [[unroll]] for (uint k = 0u; k < ITEMS * KEY_WORDS / 4u; ++k) {
      const uvec4 q = key_vectors[first + k];
#if defined(VKPRIM_KEY64)
      keys[2u * k] = q.xy;
      keys[2u * k + 1u] = q.zw;
#else
      keys[4u * k] = q.x;
      keys[4u * k + 1u] = q.y;
      keys[4u * k + 2u] = q.z;
      keys[4u * k + 3u] = q.w;
#endif
    }
  } else {
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) keys[j] = base + j < n ? load_key(base + j) : KEY_T(0u);
  }
  [[unroll]] for (uint j = 0u; j < ITEMS; ++j) values[j] = vk_identity();
  if (!READS_VALUES) return;
  if (full && flag_set(BK_VALUE_VECTORS)) {
    const uint first = (pc.value_shift + base) / VEC_N;
    [[unroll]] for (uint k = 0u; k < ITEMS / VEC_N; ++k) {
      const VEC_T q = in_vectors[first + k];
      [[unroll]] for (uint c = 0u; c < VEC_N; ++c) values[k * VEC_N + c] = q[c];
    }
  } else {
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j)
      if (base + j < n) values[j] = in_values[pc.value_shift + base + j];
  }
}

// The keys just before and just after the invocation's elements (element base - 1 and base + ITEMS):
// from the neighbouring lanes, or from memory at a subgroup's edges. Unused where out of range.
void neighbour_keys(uint base, uint n, KEY_T first, KEY_T last, out KEY_T before, out KEY_T after) {
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint lane = gl_SubgroupInvocationID;
  before = subgroupShuffleUp(last, 1u);
  after = subgroupShuffleDown(first, 1u);
  if (lane == 0u && base > 0u && base - 1u < n) before = load_key(base - 1u);
  const bool last_lane = lane == gl_SubgroupSize - 1u || gl_LocalInvocationIndex == WG_SIZE - 1u;
  if (last_lane && base + ITEMS < n) after = load_key(base + ITEMS);
#else
  before = base > 0u && base - 1u < n ? load_key(base - 1u) : first;
  after = base + ITEMS < n ? load_key(base + ITEMS) : last;
#endif
}

// Run heads (bit j: element base + j starts a run) and run ends (bit j: it is a run's last element).
void run_marks(uint base, uint n, KEY_T keys[ITEMS], KEY_T before, KEY_T after, out uint heads, out uint ends) {
  // Valid elements: bits 0 .. valid - 1. A run ends where the next element starts one, or at element n - 1.
  const uint valid = min(n - min(n, base), ITEMS);
  const uint valid_mask = valid >= 32u ? 0xFFFFFFFFu : (1u << valid) - 1u;
  heads = base == 0u ? 1u : (keys[0] != before ? 1u : 0u);
  [[unroll]] for (uint j = 1u; j < ITEMS; ++j) heads |= keys[j] != keys[j - 1u] ? 1u << j : 0u;
  heads &= valid_mask;
  const uint next_starts = valid < ITEMS || keys[ITEMS - 1u] != after ? 1u : 0u;
  ends = ((heads >> 1u) | (next_starts << (ITEMS - 1u))) & valid_mask;
  if (valid > 0u && valid < ITEMS) ends |= 1u << (valid - 1u);
  if (base + ITEMS == n) ends |= 1u << (ITEMS - 1u);
}

// The invocation's summary of its elements, folded in order. The count and head bit come from the masks;
// a constant value (the lengths' ones) from the position of the last head.
void summarize(uint base, uint n, uint heads, uint ends, VALUE_T values[ITEMS], out uint c, out VALUE_T v) {
  const uint events = MODE == MODE_NON_TRIVIAL ? ends & ~heads : heads;
  c = bitCount(events) | (heads != 0u ? RUN_HEAD_BIT : 0u);
  v = vk_identity();
  if (READS_VALUES) {
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) {
      if (base + j >= n) continue;
      v = (heads >> j & 1u) != 0u ? values[j] : vk_op(v, values[j]);
    }
  }
#if !defined(VKPRIM_TYPE_USER)
  else if (RUN_HAS_VALUE) {
    const uint valid = min(n - min(n, base), ITEMS);
    v = VALUE_T(valid - (heads != 0u ? uint(findMSB(heads)) : 0u));
  }
#endif
}

// ---- The same summary one element at a time from memory (the fallback, for another tile) ----

void summarize_from_memory(uint base, uint n, out uint c, out VALUE_T v) {
  c = 0u;
  v = vk_identity();
  if (base >= n) return;
  KEY_T prev = base > 0u ? load_key(base - 1u) : KEY_T(0u);
  KEY_T key = load_key(base);
  [[dont_unroll]] for (uint j = 0u; j < ITEMS; ++j) {
    const uint g = base + j;
    if (g >= n) break;
    const KEY_T next = g + 1u < n ? load_key(g + 1u) : key;
    const bool head = g == 0u || key != prev;
    const bool end = g + 1u == n || key != next;
#if defined(VKPRIM_TYPE_USER)
    VALUE_T x = vk_identity();  // not ?: with a struct from the buffer (common/scan_tile.glsl says why)
    if (READS_VALUES) x = in_values[pc.value_shift + g];
#else
    const VALUE_T x = READS_VALUES ? in_values[pc.value_shift + g] : vk_identity();
#endif
    vk_run_step(head, is_event(head, end), element_value(x), c, v);
    prev = key;
    key = next;
  }
}

// ---- Workgroup exclusive scan of the invocations' summaries ----

shared uint s_count[WG_SIZE];
shared VALUE_T s_value[WG_SIZE];

// The compacted outputs of one round (main): STAGE elements of A (keys are KEY_WORDS words) and of B.
const uint STAGE = WG_SIZE < 512u ? WG_SIZE * 4u : 2048u;  // src/by_key.cpp sizes shared memory alike
shared uint s_stage_a[IS_SCAN ? 1u : STAGE * KEY_WORDS];
shared VALUE_T s_stage_b[IS_SCAN || MODE == MODE_UNIQUE ? 1u : STAGE];
void stage_key(uint slot, KEY_T key) {
#if defined(VKPRIM_KEY64)
  s_stage_a[2u * slot] = key.x;
  s_stage_a[2u * slot + 1u] = key.y;
#else
  s_stage_a[slot] = key;
#endif
}

// Replays the invocation's elements from (c, v), its exclusive summary within the tile (no predecessor
// tiles), and stages the compacted outputs of `round`: STAGE slots of tile-local event ranks from round on,
// B's one later where the tile continues a run (that run's end takes B's slot 0). The ranks are the tile's
// own, so this can run before the tile's prefix is known; the one staged value that depends on the prefix,
// the continued run's (slot 0 of B, and of A for NonTrivialRuns), is completed as it is written.
void stage_round(uint round, uint c, VALUE_T v, uint base, uint heads, uint ends, uint continues,
                 KEY_T keys[ITEMS], VALUE_T values[ITEMS]) {
  // Elements past n carry no head, end or event, so they change nothing that is staged.
  [[unroll]] for (uint j = 0u; j < ITEMS; ++j) {
    const bool head = (heads >> j & 1u) != 0u;
    const bool end = (ends >> j & 1u) != 0u;
    const bool event = is_event(head, end);
    vk_run_step(head, event, element_value(values[j]), c, v);
    // Slots outside this round wrap to large values and are skipped.
    const uint rank = (c & RUN_COUNT_MASK) - 1u;
    const uint slot = rank - round;
    if (MODE == MODE_REDUCE || MODE == MODE_ENCODE) {
      const uint b_slot = rank + continues - round;
      if (head && slot < STAGE) stage_key(slot, keys[j]);
      if (end && b_slot < STAGE) s_stage_b[b_slot] = v;
    } else if (MODE == MODE_UNIQUE) {
      if (head && slot < STAGE) {
        if (flag_set(BK_INDICES)) s_stage_a[slot] = base + j;
        else stage_key(slot, keys[j]);
      }
    }
#if !defined(VKPRIM_TYPE_USER)
    else if (event && slot < STAGE) {  // MODE_NON_TRIVIAL: the run's offset and length as this tile sees it
      s_stage_a[slot] = base + j + 1u - uint(v);
      s_stage_b[slot] = v;
    }
#endif
  }
}

#if !defined(VKPRIM_NO_SUBGROUPS)
// Inclusive scan across the subgroup (Hillis & Steele over shuffles: the combine is not a subgroup
// operation). A subgroup larger than the workgroup is partial; lanes only read lanes below them.
void subgroup_inclusive(inout uint c, inout VALUE_T v) {
  const uint lane = gl_SubgroupInvocationID;
  for (uint d = 1u; d < gl_SubgroupSize; d <<= 1u) {
    const uint oc = subgroupShuffleUp(c, d);
    const VALUE_T ov = SHUFFLE_UP_VALUE(v, d);
    if (lane >= d) vk_run_combine(oc, ov, c, v, c, v);
  }
}
#endif

// Replaces (c, v) by the combined summaries of the invocations before this one (empty for invocation 0)
// and returns the workgroup's combined summary in (tc, tv). Every invocation calls it (barriers). The keyed
// kernel keeps this copy of common/workgroup_scan.glsl's steps: through that header, with the summary as one
// struct, ScanByKey's 512 x 12 tiles took 57 registers against 40 and ran 10-15% slower on an H200
// (docs/PERFORMANCE.md, Keyed primitives).
void workgroup_exclusive(inout uint c, inout VALUE_T v, out uint tc, out VALUE_T tv) {
  const uint tid = gl_LocalInvocationIndex;
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint lane = gl_SubgroupInvocationID;
  uint ic = c;
  VALUE_T iv = v;
  subgroup_inclusive(ic, iv);
  uint ec = subgroupShuffleUp(ic, 1u);
  VALUE_T ev = SHUFFLE_UP_VALUE(iv, 1u);
  if (lane == 0u) {
    ec = 0u;
    ev = vk_identity();
  }
  if (lane == gl_SubgroupSize - 1u || tid == WG_SIZE - 1u) {
    s_count[gl_SubgroupID] = ic;
    s_value[gl_SubgroupID] = iv;
  }
  barrier();
  // Every invocation folds the subgroup totals in order (a few per workgroup on GPUs).
  uint pc_ = 0u;
  VALUE_T pv = vk_identity();
  tc = 0u;
  tv = vk_identity();
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    if (s == gl_SubgroupID) {
      pc_ = tc;
      pv = tv;
    }
    vk_run_combine(tc, tv, s_count[s], s_value[s], tc, tv);
  }
  vk_run_combine(pc_, pv, ec, ev, c, v);
  barrier();
#else
  s_count[tid] = c;
  s_value[tid] = v;
  barrier();
  for (uint d = 1u; d < WG_SIZE; d <<= 1u) {
    uint nc = s_count[tid];
    VALUE_T nv = s_value[tid];
    if (tid >= d) vk_run_combine(s_count[tid - d], s_value[tid - d], nc, nv, nc, nv);
    barrier();
    s_count[tid] = nc;
    s_value[tid] = nv;
    barrier();
  }
  tc = s_count[WG_SIZE - 1u];
  tv = s_value[WG_SIZE - 1u];
  c = tid > 0u ? s_count[tid - 1u] : 0u;
  v = tid > 0u ? s_value[tid - 1u] : vk_identity();
  barrier();
#endif
}

// ---- Look-back ----

#if defined(VKPRIM_TYPE_USER)
shared uint s_words[5 + VKPRIM_USER_WORDS];
#define W_CONTINUES 3  // 1 where the tile's first element continues a run from the tile before
#define W_OPEN 4       // 1 where the tile's last run goes on into the next tile
#define W_PREFIX_VALUE 5  // 5..: the value bits of W_PREFIX's summary
#else
shared uint s_words[7];
#define W_CONTINUES 5  // 1 where the tile's first element continues a run from the tile before
#define W_OPEN 6       // 1 where the tile's last run goes on into the next tile
#endif
#define W_ACTION 0   // LOOK_ON, LOOK_DONE, or LOOK_FALLBACK + the tile to summarize ourselves
#define W_LOOK 1     // next predecessor to inspect
#define W_PREFIX 2   // 2: the combined count word of the predecessors inspected so far; 3, 4: its value bits
#define LOOK_ON 0u
#define LOOK_DONE 1u
#define LOOK_FALLBACK 2u

#if defined(VKPRIM_BY_KEY_PORTABLE)
// Written by one invocation and read by all only across barrier(), so plain accesses suffice.
void sh_set(uint i, uint x) { s_words[i] = x; }
uint sh_get(uint i) { return s_words[i]; }
#else
void sh_set(uint i, uint x) { atomicStore(s_words[i], x, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
uint sh_get(uint i) { return atomicLoad(s_words[i], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
#endif
#if defined(VKPRIM_TYPE_USER)
void sh_set_prefix(uint c, VALUE_T v) {
  sh_set(W_PREFIX, c);
  const VALUE_BITS_T b = vk_value_bits(v);
  for (uint k = 0u; k < VKPRIM_USER_WORDS; ++k) sh_set(W_PREFIX_VALUE + k, b[k]);
}
void sh_get_prefix(out uint c, out VALUE_T v) {
  c = sh_get(W_PREFIX);
  VALUE_BITS_T b;
  for (uint k = 0u; k < VKPRIM_USER_WORDS; ++k) b[k] = sh_get(W_PREFIX_VALUE + k);
  v = vk_bits_value(b);
}
#else
void sh_set_prefix(uint c, VALUE_T v) {
  sh_set(W_PREFIX, c);
#if VEC_N == 4
  sh_set(W_PREFIX + 1, vk_value_bits(v));
#else
  const uvec2 b = vk_value_bits(v);
  sh_set(W_PREFIX + 1, b.x);
  sh_set(W_PREFIX + 2, b.y);
#endif
}
void sh_get_prefix(out uint c, out VALUE_T v) {
  c = sh_get(W_PREFIX);
#if VEC_N == 4
  v = vk_bits_value(sh_get(W_PREFIX + 1));
#else
  v = vk_bits_value(uvec2(sh_get(W_PREFIX + 1), sh_get(W_PREFIX + 2)));
#endif
}
#endif

#if !defined(VKPRIM_BY_KEY_PORTABLE)
// Not common/look_back.glsl (the scan's): with the run summary as one struct through it, ReduceByKey ran
// 5.8-7.6% slower on an H200 and ScanByKey 5.5% at 2^20 (docs/PERFORMANCE.md, "Keyed primitives"), so this
// copy stays until the shared one matches.
// Run by subgroup 0 alone (invocation 0 without subgroups): combines the predecessors' summaries in front
// of (pc_, pv), the combination of the nearer ones, up to the first inclusive one. Returns LOOK_DONE or
// LOOK_FALLBACK + the predecessor that stayed not ready past the spin limit, or at all once the tile's
// look-back has taken LOOK_TRIP_LIMIT steps (`steps` counts them over every call).
uint look_back(uint spin_limit, inout uint look, inout uint pc_, inout VALUE_T pv, inout uint depth, inout uint steps) {
  uint polls = 0u;
  for (;;) {
    steps += 1u;
#if !defined(VKPRIM_NO_SUBGROUPS)
    const uint lane = gl_SubgroupInvocationID;
    const VALUE_T identity = vk_identity();
    // Lanes before tile 0 act as an empty inclusive summary. No lane branches apart before the subgroup
    // operations below (docs/ALGORITHMS.md, "Reconvergence"): those lanes read tile 0's state too, and drop
    // it; every ?: below picks between variables, which glslang compiles to a select.
    const bool in_range = lane <= look;
    uint c;
    VALUE_T v;
    const uint f = vk_run_read(look - min(lane, look), c, v);
    const uint flag = in_range ? f : STATE_INCLUSIVE;
    c = in_range ? c : 0u;
    v = vk_pick(in_range, v, identity);
    const uvec4 inclusive = subgroupBallot(flag == STATE_INCLUSIVE);
    const uvec4 not_ready = subgroupBallot(flag == STATE_NOT_READY);
    const bool any_inclusive = any(notEqual(inclusive, uvec4(0u)));
    const uint stop = any_inclusive ? subgroupBallotFindLSB(inclusive) : gl_SubgroupSize;
    const uint blocked = any(notEqual(not_ready, uvec4(0u))) ? subgroupBallotFindLSB(not_ready) : gl_SubgroupSize;
    // Lanes 0 .. last (nearest first) are combined: those before the blocked one, or up to the inclusive one.
    const uint taken = blocked < stop ? blocked : min(stop + 1u, gl_SubgroupSize);
    if (taken > 0u) {
      const bool in_window = lane < taken;
      const uint count = c & RUN_COUNT_MASK, head = c & RUN_HEAD_BIT;
      const uint wc = subgroupAdd(in_window ? count : 0u) | subgroupOr(in_window ? head : 0u);
      // The window's value: the values from its nearest head (its last in input order) to its end.
      const bool has_head = head != 0u;
      const uvec4 with_head = subgroupBallot(in_window && has_head);
      const uint nearest_head = any(notEqual(with_head, uvec4(0u))) ? subgroupBallotFindLSB(with_head) : taken - 1u;
      const VALUE_T wv = LOOK_REDUCE(vk_pick(lane <= nearest_head, v, identity));
      vk_run_combine(wc, wv, pc_, pv, pc_, pv);
    }
    if (blocked < stop) {
      if (blocked > 0u) {
        look -= blocked;
        depth += blocked;
        polls = 0u;
      }
      polls += 1u;
      if (polls > spin_limit || steps > LOOK_TRIP_LIMIT) return LOOK_FALLBACK + look;
      continue;
    }
    if (any_inclusive) {
      depth += stop + 1u;
      return LOOK_DONE;
    }
    look -= gl_SubgroupSize;
    depth += gl_SubgroupSize;
#else
    uint c;
    VALUE_T v;
    const uint flag = vk_run_read(look, c, v);
    if (flag == STATE_NOT_READY) {
      polls += 1u;
      if (polls > spin_limit || steps > LOOK_TRIP_LIMIT) return LOOK_FALLBACK + look;
      continue;
    }
    polls = 0u;
    vk_run_combine(c, v, pc_, pv, pc_, pv);
    depth += 1u;
    if (flag == STATE_INCLUSIVE) return LOOK_DONE;
    look -= 1u;
#endif
  }
  return LOOK_FALLBACK + look;  // only where the driver cuts long loops short: never claim a prefix
}
#endif  // !VKPRIM_BY_KEY_PORTABLE

#if defined(VKPRIM_BY_KEY_PORTABLE)
// ---- The portable variant's tile summaries (binding 2): the count word, then the value's bits ----

const uint SUMMARY_WORDS = RUN_HAS_VALUE ? 1u + RUN_VALUE_WORDS : 1u;  // common/run_state.glsl
#define SUMMARY_HEADER_WORDS 16u  // the statistics words of the chained variant's header, left as cleared

void summary_store(uint tile, uint c, VALUE_T v) {
  const uint base = SUMMARY_HEADER_WORDS + tile * SUMMARY_WORDS;
  summary_words[base] = c;
  if (!RUN_HAS_VALUE) return;
  const VALUE_BITS_T b = vk_value_bits(v);
#if defined(VKPRIM_TYPE_USER)
  for (uint k = 0u; k < RUN_VALUE_WORDS; ++k) summary_words[base + 1u + k] = b[k];
#elif VEC_N == 4
  summary_words[base + 1u] = b;
#else
  summary_words[base + 1u] = b.x;
  summary_words[base + 2u] = b.y;
#endif
}

void summary_load(uint tile, out uint c, out VALUE_T v) {
  const uint base = SUMMARY_HEADER_WORDS + tile * SUMMARY_WORDS;
  c = summary_words[base];
  v = vk_identity();
  if (!RUN_HAS_VALUE) return;
#if defined(VKPRIM_TYPE_USER)
  VALUE_BITS_T b;
  for (uint k = 0u; k < RUN_VALUE_WORDS; ++k) b[k] = summary_words[base + 1u + k];
  v = vk_bits_value(b);
#elif VEC_N == 4
  v = vk_bits_value(summary_words[base + 1u]);
#else
  v = vk_bits_value(uvec2(summary_words[base + 1u], summary_words[base + 2u]));
#endif
}

// PHASE_SCAN, one workgroup: each tile's summary becomes the combination of the summaries before it. Invocation
// tid takes 4 consecutive tiles of each step of WG_SIZE x 4 (a few words per tile of thousands of elements, so
// their access pattern hardly matters), folds them in order, and the workgroup scan of those folds places them.
// Absent tiles are skipped, not combined as the identity (a float's op(x, identity) need not keep x's bits).
void scan_summaries(uint tiles) {
  const uint tid = gl_LocalInvocationIndex;
  uint carry_c = 0u;
  VALUE_T carry_v = vk_identity();
  for (uint first = 0u; first < tiles; first += WG_SIZE * 4u) {
    const uint mine = first + tid * 4u;
    uint sc[4];
    VALUE_T sv[4];
    uint c = 0u;
    VALUE_T v = vk_identity();
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
      sc[k] = 0u;
      sv[k] = vk_identity();
      if (mine + k >= tiles) continue;
      summary_load(mine + k, sc[k], sv[k]);
      if (k == 0u) {
        c = sc[k];
        v = sv[k];
      } else {
        vk_run_combine(c, v, sc[k], sv[k], c, v);
      }
    }
    uint tc;
    VALUE_T tv;
    workgroup_exclusive(c, v, tc, tv);
    // The prefix of tile `mine`: the carry, then the folds of the invocations before this one.
    if (tid == 0u) {
      c = carry_c;
      v = carry_v;
    } else if (first > 0u) {
      vk_run_combine(carry_c, carry_v, c, v, c, v);
    }
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
      if (mine + k >= tiles) continue;
      summary_store(mine + k, c, v);
      vk_run_combine(c, v, sc[k], sv[k], c, v);
    }
    if (first == 0u) {
      carry_c = tc;
      carry_v = tv;
    } else {
      vk_run_combine(carry_c, carry_v, tc, tv, carry_c, carry_v);
    }
  }
}
#endif  // VKPRIM_BY_KEY_PORTABLE

uint element_count() { return flag_set(BK_INDIRECT) ? vk_indirect_count(0u) : pc.count; }

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = element_count();
  const uint tiles = max(1u, (n + TILE_ELEMENTS - 1u) / TILE_ELEMENTS);
#if defined(VKPRIM_BY_KEY_PORTABLE)
  if (PHASE == PHASE_SCAN) {
    if (vk_workgroup_index() == 0u) scan_summaries(tiles);
    return;
  }
  if (vk_workgroup_index() >= tiles) return;
  const uint tile = vk_workgroup_index();
#else
  if (vk_workgroup_index() >= tiles) return;
  const uint tile = vk_workgroup_tile(pc.knobs, IS_SCAN);
#endif
  const uint base = tile * TILE_ELEMENTS + tid * ITEMS;

  KEY_T keys[ITEMS];
  VALUE_T values[ITEMS];
  load_elements(base, n, keys, values);
  KEY_T before, after;
  neighbour_keys(base, n, keys[0], keys[ITEMS - 1u], before, after);
  uint heads, ends;
  run_marks(base, n, keys, before, after, heads, ends);
  uint c;
  VALUE_T v;
  summarize(base, n, heads, ends, values, c, v);
  uint tc;
  VALUE_T tv;
  workgroup_exclusive(c, v, tc, tv);

  // The tile's edges, for the compacted outputs below (both algorithms): whether its first element
  // continues a run of the tile before (by invocation 0) and whether its last run goes on into the next
  // tile (by the last invocation). Macros, so both branches compile to the code they had.
#define SET_CONTINUES() sh_set(W_CONTINUES, base > 0u && base < n && (heads & 1u) == 0u ? 1u : 0u)
#define SET_OPEN() \
  if (tid == WG_SIZE - 1u) sh_set(W_OPEN, base + ITEMS - 1u < n && (ends >> (ITEMS - 1u) & 1u) == 0u ? 1u : 0u)
  // The tile's compacted outputs, from its own summaries (after the barrier that follows SET_OPEN): A holds
  // its events; B (ReduceByKey, RunLengthEncode) one value per run end, from the run the tile continues
  // (continues) up to its last run that ends in it (W_OPEN: its last run goes on).
#define TILE_OUTPUTS() \
  const uint tile_events = tc & RUN_COUNT_MASK; \
  const bool per_end = MODE == MODE_REDUCE || MODE == MODE_ENCODE; \
  const uint continues = IS_SCAN ? 0u : sh_get(W_CONTINUES); \
  const uint b_count = tile_events + (per_end ? continues - sh_get(W_OPEN) : 0u); \
  const uint rounds_end = max(tile_events, b_count); \
  const bool one_round = rounds_end <= STAGE
#if defined(VKPRIM_BY_KEY_PORTABLE)
  if (PHASE == PHASE_SUMMARIZE) {
    if (tid == 0u) summary_store(tile, tc, tv);
    return;
  }
  if (tid == 0u) {
    uint pc_;
    VALUE_T pv;
    summary_load(tile, pc_, pv);
    sh_set_prefix(pc_, pv);
    SET_CONTINUES();
  }
  SET_OPEN();
  barrier();
  TILE_OUTPUTS();
  const bool staged_early = false;
#else
  const uint spin_limit = pc.knobs & 0xFFFFu;
  const uint skip_period = (pc.knobs >> 16u) & 0x3FFFu;
  const bool skip = tile != 0u && skip_period != 0u && tile % skip_period == skip_period - 1u;
  if (tid == 0u) {
    if (tile == 0u) vk_run_publish(0u, STATE_INCLUSIVE, tc, tv);
    else if (!skip) vk_run_publish(tile, STATE_AGGREGATE, tc, tv);
    sh_set(W_LOOK, tile - 1u);
    sh_set_prefix(0u, vk_identity());
    SET_CONTINUES();
  }
  SET_OPEN();
  barrier();
  TILE_OUTPUTS();

#if !defined(VKPRIM_NO_SUBGROUPS)
  const bool looker = gl_SubgroupID == 0u;
#else
  const bool looker = tid == 0u;
#endif
  // Tiles that look back and whose outputs fit one staging round stage them first: the staging needs only
  // the tile's own summaries, so it leaves the path after the look-back, and the predecessors get that
  // time to publish. On an H100 this ran faster than staging after the look-back, and than staging by the
  // other subgroups while subgroup 0 looks back (docs/PERFORMANCE.md, "Keyed primitives").
  const bool staged_early = !IS_SCAN && tile != 0u && one_round;
  if (staged_early) stage_round(0u, c, v, base, heads, ends, continues, keys, values);
  if (tile != 0u) {
    uint depth = 0u, steps = 0u;
    for (;;) {
      if (looker) {
        uint look = sh_get(W_LOOK);
        uint pc_;
        VALUE_T pv;
        sh_get_prefix(pc_, pv);
        const uint action = look_back(spin_limit, look, pc_, pv, depth, steps);
        if (tid == 0u) {
          sh_set(W_LOOK, look);
          sh_set_prefix(pc_, pv);
          sh_set(W_ACTION, action);
        }
      }
      barrier();
      const uint action = sh_get(W_ACTION);
      barrier();
      if (action == LOOK_DONE) break;
      // Fallback: summarize the stuck predecessor ourselves and publish it (never downgrading a state).
      const uint stuck = action - LOOK_FALLBACK;
      uint sc;
      VALUE_T sv;
      summarize_from_memory(stuck * TILE_ELEMENTS + tid * ITEMS, n, sc, sv);
      uint stc;
      VALUE_T stv;
      workgroup_exclusive(sc, sv, stc, stv);
      if (tid == 0u) {
        vk_stat_add(STAT_FALLBACKS, 1u);
        uint pc_;
        VALUE_T pv;
        sh_get_prefix(pc_, pv);
        vk_run_combine(stc, stv, pc_, pv, pc_, pv);
        sh_set_prefix(pc_, pv);
        if (stuck == 0u) {
          vk_run_publish(0u, STATE_INCLUSIVE, stc, stv);
          sh_set(W_ACTION, LOOK_DONE);
        } else {
          vk_run_publish(stuck, STATE_AGGREGATE, stc, stv);
          sh_set(W_LOOK, stuck - 1u);
          sh_set(W_ACTION, LOOK_ON);
        }
      }
      barrier();
      const bool done = sh_get(W_ACTION) == LOOK_DONE;
      barrier();
      if (done) break;
    }
    if (tid == 0u) {
      uint pc_;
      VALUE_T pv;
      sh_get_prefix(pc_, pv);
      uint ic;
      VALUE_T iv;
      vk_run_combine(pc_, pv, tc, tv, ic, iv);
      if (!skip) vk_run_publish(tile, STATE_INCLUSIVE, ic, iv);
      if ((pc.knobs & 0x80000000u) == 0u) {
        vk_stat_add(STAT_POLLS, steps);
        vk_stat_max(STAT_DEPTH, depth);
      }
    }
    barrier();
  }
#endif

  uint tile_c;
  VALUE_T tile_v;
  sh_get_prefix(tile_c, tile_v);
  if (IS_SCAN) {
    // The invocation's full prefix, then its elements replayed from it.
    vk_run_combine(tile_c, tile_v, c, v, c, v);
    // The inclusive scan in place; the exclusive one is it shifted by one element, the identity at heads
    // (one chain of operations either way; the exclusive value kept beside the running one per element ran
    // 8% slower on an H100).
    const VALUE_T before = v;
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) {
      if (base + j >= n) continue;
      v = (heads >> j & 1u) != 0u ? values[j] : vk_op(v, values[j]);
      values[j] = v;
    }
    if (MODE == MODE_SCAN_EXCLUSIVE) {
      [[unroll]] for (uint j = ITEMS - 1u; j >= 1u; --j)
        values[j] = (heads >> j & 1u) != 0u ? vk_identity() : values[j - 1u];
      values[0] = (heads & 1u) != 0u ? vk_identity() : before;
    }
    if (base + ITEMS <= n && flag_set(BK_B_VECTORS)) {
      const uint first = (pc.b_shift + base) / VEC_N;
      [[unroll]] for (uint k = 0u; k < ITEMS / VEC_N; ++k) {
        VEC_T q;
        [[unroll]] for (uint e = 0u; e < VEC_N; ++e) q[e] = values[k * VEC_N + e];
        b_vectors[first + k] = q;
      }
    } else {
      [[unroll]] for (uint j = 0u; j < ITEMS; ++j)
        if (base + j < n) b_values[pc.b_shift + base + j] = values[j];
    }
    return;
  }
  // Compacted outputs: the tile's events are ranks tile_first .. tile_first + tile_events - 1. They go
  // through shared memory STAGE at a time, so consecutive invocations store consecutive elements (each
  // invocation's own outputs are a few words far apart from its neighbours': stored directly, every
  // 32-byte sector would be written piecemeal by several store instructions).
  // A's ranks are the events' (tile_first ..); B holds one value per run end, and the tile's ends are runs
  // tile_first - 1 (where the tile continues a run that ends in it) up to its last run that ends in it.
  const uint tile_first = tile_c & RUN_COUNT_MASK;
  const uint b_first = tile_first - (per_end ? continues : 0u);
  for (uint round = 0u; round < rounds_end; round += STAGE) {
    if (round != 0u || !staged_early) stage_round(round, c, v, base, heads, ends, continues, keys, values);
    barrier();
    // The continued run's staged value (slot 0 of round 0) lacks the predecessors' part of the run, tile_v.
    const bool complete_first = round == 0u && continues != 0u;
    const uint a_count = min(STAGE, tile_events - min(tile_events, round));
    const uint words = (MODE != MODE_NON_TRIVIAL && !flag_set(BK_INDICES)) ? KEY_WORDS : 1u;
    for (uint i = tid; i < a_count * words; i += WG_SIZE) {
      uint word = s_stage_a[i];
#if !defined(VKPRIM_TYPE_USER)
      if (MODE == MODE_NON_TRIVIAL && i == 0u && complete_first) word -= uint(tile_v);
#endif
      a_words[(pc.a_shift + tile_first + round) * words + i] = word;
    }
    if (MODE != MODE_UNIQUE) {
      const uint count = min(STAGE, b_count - min(b_count, round));
      for (uint i = tid; i < count; i += WG_SIZE) {
        VALUE_T x = s_stage_b[i];
        if (i == 0u && complete_first) x = vk_op(tile_v, x);
        b_values[pc.b_shift + b_first + round + i] = x;
      }
    }
    barrier();
  }
  // The last invocation stores the count: on lavapipe (Mesa 22.3) subgroup 0 was seen to run nothing after
  // the kernel's last barrier (an atomic there from invocation 0 never landed, from invocations 8, 200 and
  // 255 it did; one just before the barrier landed).
  if (tid == WG_SIZE - 1u && tile == tiles - 1u) count_words[pc.count_shift] = tile_first + tile_events;
}
