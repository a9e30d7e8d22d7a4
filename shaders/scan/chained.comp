#version 460
// The scoped atomics (common/tile_state.glsl) put this kernel under the Vulkan memory model; the pragma makes
// every shared access non-private (made available / visible at workgroup scope), so the barrier()s, which
// are workgroup acquire-release barriers, order the workgroup's shared-memory traffic.
#pragma use_vulkan_memory_model
// Single-pass chained scan with decoupled look-back (Merrill & Garland 2016) and, when FALLBACK is set,
// decoupled fallback (Smith, Levien & Owens, SPAA 2025). One dispatch per storage-range window:
//  1. the tile index comes from an atomic ticket, so tiles start in order whatever the scheduler does, or
//     where the launch-order knob is set (ContextOptions::tile_order) from the workgroup index;
//  2. the tile (WG_SIZE x ITEMS 16-byte vectors, rows of coalesced vectors as in common/scan_tile.glsl)
//     is scanned in registers and one workgroup scan; its aggregate is published at once;
//  3. subgroup 0 looks back over LOOK_WINDOWS x as many predecessors at once as it has lanes, stops at
//     the first inclusive prefix and combines the aggregates before it;
//  4. the tile publishes its inclusive prefix and writes its output.
// Fallback: after pc.param not-ready polls of the same predecessor, the whole workgroup reduces that
// predecessor's tile from the input itself (floats: the owner's code and order; integers: any order, one
// workgroup reduction; either way the owner's bits; user operators: the owner's code and order), publishes it with atomicMax and goes on looking
// back: no forward-progress assumption. Without FALLBACK it waits.
// pc.param2 bit 31: no look-back statistics; bit 30: launch order (set only with FALLBACK). Test knob:
// pc.param2 & 0x3FFFFFFF = k > 0 makes every k-th tile (never tile 0) publish nothing: no aggregate and,
// with FALLBACK, no inclusive prefix either, so every successor that reaches it must reduce it itself.
// Without FALLBACK it still publishes its inclusive prefix (nothing else could unblock its successors).
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant; VKPRIM_TYPE_USER an engine's operator, whose
// order the kernel keeps: common/types.glsl), VKPRIM_NO_SUBGROUPS, VKPRIM_STATE64 (see common/tile_state.glsl),
// VKPRIM_FALLBACK. Specialization: WG_SIZE (power of two), ITEMS (1..8: rows of vectors, scanned four
// at a time in one workgroup scan of ROW_T), LOOK_WINDOWS (1..8). Bindings: common/scan_io.glsl,
// with binding 2 the tile state and binding 4 the record_indirect region (SCAN_INDIRECT: count and tiles
// computed on the GPU). Push: count, shifts, group_count = tiles, param = spin limit,
// param2 = forced-skip period | bit 31: no look-back statistics, flags (SCAN_EXCLUSIVE, carry slots).
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 4
#include "common/config.glsl"
#include "common/scan_io.glsl"
#include "common/scan_tile.glsl"
#include "common/workgroup_row_scan.glsl"
#include "common/workgroup.glsl"
#include "common/tile_state.glsl"
#if defined(VKPRIM_ORDERED)
#include "common/blocked_tile.glsl"
#endif
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_ballot : require
#endif

// Subgroup-wide windows of predecessor states a look-back step loads at once (1..8, the runtime's tuning
// table; the emulation path reads one predecessor per step).
layout(constant_id = 2) const uint LOOK_WINDOWS = 1;

// What invocation 0 tells the workgroup (relaxed atomics: read by the look-back loop between barriers).
#if defined(VKPRIM_TYPE_USER)
shared uint s_words[2 + VKPRIM_USER_WORDS];
#else
shared uint s_words[4];
#endif
#define W_ACTION 0    // LOOK_ON, LOOK_DONE, or the tile to reduce ourselves (>= LOOK_FALLBACK)
#define W_LOOK 1      // next predecessor to inspect
#define W_PREFIX 2    // 2, 3 (user types: 2..): bits of the combined aggregates of the predecessors inspected so far

void sh_set(uint i, uint v) { atomicStore(s_words[i], v, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
uint sh_get(uint i) { return atomicLoad(s_words[i], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
#if defined(VKPRIM_TYPE_USER)
void sh_set_prefix(VALUE_T v) {
  const VALUE_BITS_T b = vk_value_bits(v);
  for (uint k = 0u; k < VKPRIM_USER_WORDS; ++k) sh_set(W_PREFIX + k, b[k]);
}
VALUE_T sh_get_prefix() {
  VALUE_BITS_T b;
  for (uint k = 0u; k < VKPRIM_USER_WORDS; ++k) b[k] = sh_get(W_PREFIX + k);
  return vk_bits_value(b);
}
#else
void sh_set_prefix(VALUE_T v) {
  const VALUE_BITS_T b = vk_value_bits(v);
#if defined(VKPRIM_INT64) || defined(VKPRIM_TYPE_F64)
  sh_set(W_PREFIX, b.x);
  sh_set(W_PREFIX + 1, b.y);
#else
  sh_set(W_PREFIX, b);
#endif
}
VALUE_T sh_get_prefix() {
#if defined(VKPRIM_INT64) || defined(VKPRIM_TYPE_F64)
  return vk_bits_value(uvec2(sh_get(W_PREFIX), sh_get(W_PREFIX + 1)));
#else
  return vk_bits_value(sh_get(W_PREFIX));
#endif
}
#endif

// A fallback recomputes a stuck predecessor's aggregate with the owner's code in the owner's order where
// grouping changes the bits (floats) or the order changes the result (user operators need not commute).
#if defined(VKPRIM_TYPE_F32) || defined(VKPRIM_TYPE_F64) || defined(VKPRIM_ORDERED)
#define OWNER_ORDER_FALLBACK 1
#endif
// Lane i of a look-back window holds predecessor look - i: a later lane is an earlier tile, so an operator
// that need not commute folds the lanes in reverse.
#if defined(VKPRIM_ORDERED)
#define LOOK_REDUCE vk_subgroup_reduce_reversed
#else
#define LOOK_REDUCE vk_subgroup_reduce
#endif

#if !defined(VKPRIM_ORDERED)
// A tile's vectors loaded into registers, every load issued before the first is used (no branch between
// them when the tile is whole).
#define LOAD_TILE(tile, vectors)                                                                       \
  {                                                                                                    \
    const uint first_ = vk_tile_first_vector(tile);                                                    \
    if (vk_tile_full(tile)) {                                                                          \
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) vectors[k] = vk_tile_load_full(first_ + k * WG_SIZE);  \
    } else {                                                                                           \
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) vectors[k] = vk_tile_load(first_ + k * WG_SIZE);       \
    }                                                                                                  \
  }

// A tile's vectors loaded and scanned in registers (each vector's inclusive scan, left to right). A float
// fallback folds each vector of a stuck tile in the same order (main), so its vector totals and the row
// scans over them agree with the owner's bit for bit.
#define LOAD_AND_SCAN_TILE(tile, scanned, totals)                                                      \
  {                                                                                                    \
    totals[0] = vk_row_identity();                                                                     \
    totals[1] = vk_row_identity();                                                                     \
    LOAD_TILE(tile, scanned)                                                                           \
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {                                                     \
      [[unroll]] for (uint c = 1u; c < VEC_N; ++c) scanned[k][c] = vk_op(scanned[k][c - 1u], scanned[k][c]); \
      totals[k / ROW_N][k % ROW_N] = scanned[k][VEC_N - 1u];                                           \
    }                                                                                                  \
  }

// One workgroup scan per group of four rows: each vector's prefix within its row, and the row totals.
void scan_rows(ROW_T totals[2], out ROW_T prefix[2], out ROW_T row_totals[2]) {
  prefix[1] = row_totals[1] = vk_row_identity();
  prefix[0] = vk_workgroup_exclusive_scan(totals[0], row_totals[0]);
  if (ITEMS > ROW_N) prefix[1] = vk_workgroup_exclusive_scan(totals[1], row_totals[1]);
}

VALUE_T chain_rows(ROW_T row_totals[2]) {
  VALUE_T total = row_totals[0][0];
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) total = vk_op(total, row_totals[k / ROW_N][k % ROW_N]);
  return total;
}
#endif  // !VKPRIM_ORDERED

// The look-back (common/look_back.glsl) over the tiles' aggregates and inclusive prefixes.
#define LB_T VALUE_T
#define LB_WINDOWS LOOK_WINDOWS
#if defined(VKPRIM_FALLBACK)
#define LB_FALLBACK 1
#else
#define LB_FALLBACK 0
#endif
uint lb_read(uint tile, out VALUE_T v) { return vk_state_read(tile, v); }
VALUE_T lb_empty() { return vk_identity(); }
#if !defined(VKPRIM_NO_SUBGROUPS)
VALUE_T lb_pick(bool c, VALUE_T a, VALUE_T b) { return vk_pick(c, a, b); }
void lb_prepend(VALUE_T v, uint taken, inout VALUE_T prefix) {
  prefix = vk_op(LOOK_REDUCE(vk_pick(gl_SubgroupInvocationID < taken, v, vk_identity())), prefix);
}
#endif
void lb_prepend_one(VALUE_T v, inout VALUE_T prefix) { prefix = vk_op(v, prefix); }
#include "common/look_back.glsl"

void main() {
  vk_scan_begin();
  const uint tid = gl_LocalInvocationIndex;
  if (vk_workgroup_index() >= vk_scan_group_count) return;
  const uint tile = vk_workgroup_tile(pc.param2, false);

#if defined(VKPRIM_ORDERED)
  // Blocked tile (common/blocked_tile.glsl); the invocation's prefix folded in now, as below.
  VALUE_T scanned[ITEMS];
  VALUE_T aggregate;
  {
    const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
    VALUE_T prefix;
    vk_blocked_scan(tile, scanned, prefix, aggregate);
    if (exclusive) {
      [[unroll]] for (uint k = ITEMS - 1u; k >= 1u; --k) scanned[k] = vk_op(prefix, scanned[k - 1u]);
      scanned[0] = prefix;
    } else {
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_op(prefix, scanned[k]);
    }
  }
#else
  VEC_T scanned[ITEMS];
  VALUE_T aggregate;
  {
    ROW_T vector_totals[2], prefix[2], row_totals[2];
    LOAD_AND_SCAN_TILE(tile, scanned, vector_totals)
    scan_rows(vector_totals, prefix, row_totals);
    aggregate = chain_rows(row_totals);
    // Fold the tile-local prefixes in now (row chain op vector prefix op in-vector scan; exclusive shifts by
    // one), so only the tile's own values stay live through the look-back: fewer registers, more tiles
    // resident per multiprocessor.
    const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
    VALUE_T chain = row_totals[0][0];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
      const VALUE_T p = k == 0u ? prefix[0][0] : vk_op(chain, prefix[k / ROW_N][k % ROW_N]);
      if (exclusive) {
        [[unroll]] for (uint c = VEC_N - 1u; c >= 1u; --c) scanned[k][c] = vk_op(p, scanned[k][c - 1u]);
        scanned[k][0] = p;
      } else {
        [[unroll]] for (uint c = 0u; c < VEC_N; ++c) scanned[k][c] = vk_op(p, scanned[k][c]);
      }
      if (k > 0u) chain = vk_op(chain, row_totals[k / ROW_N][k % ROW_N]);
    }
  }
#endif
  const bool has_carry = vk_scan_flag(SCAN_CARRY_IN_SLOT);
  const VALUE_T carry_in = vk_scan_carry_in(0u);

  // The exclusive prefix of this tile.
  if (tile == 0u) {
    if (tid == 0u) {
      vk_state_publish(0u, STATE_INCLUSIVE, has_carry ? vk_op(carry_in, aggregate) : aggregate);
      sh_set_prefix(carry_in);
    }
  } else {
    const uint skip_period = pc.param2 & 0x3FFFFFFFu;
    const bool skip = skip_period != 0u && tile % skip_period == skip_period - 1u;
    if (tid == 0u) {
      if (!skip) vk_state_publish(tile, STATE_AGGREGATE, aggregate);
      sh_set(W_LOOK, tile - 1u);
      sh_set_prefix(vk_identity());
    }
    barrier();
    uint depth = 0u, steps = 0u;
    for (;;) {
#if !defined(VKPRIM_NO_SUBGROUPS)
      const bool looker = gl_SubgroupID == 0u;
#else
      const bool looker = tid == 0u;
#endif
      if (looker) {
        uint look = sh_get(W_LOOK);
        VALUE_T prefix = sh_get_prefix();
        const uint action = look_back(pc.param, look, prefix, depth, steps);
        if (tid == 0u) {
          sh_set(W_LOOK, look);
          sh_set_prefix(prefix);
          sh_set(W_ACTION, action);
        }
      }
      barrier();
      const uint action = sh_get(W_ACTION);
      barrier();  // all have read before the shared state changes again
      if (action == LOOK_DONE) break;
#if !defined(VKPRIM_FALLBACK)
      if (action == LOOK_ON) continue;
#endif
      // Fallback: reduce the stuck predecessor ourselves and publish its aggregate (never downgrading).
      const uint stuck = action - LOOK_FALLBACK;
#if defined(VKPRIM_ORDERED)
      // Tiles of 8 or more values per invocation fold the stuck tile's values as they load rather than hold
      // them beside their own: the kernel's peak of registers was this path's (H100: vec4 sum 80 -> 64
      // registers and 6% faster at 2^26, ArgMin 2% faster; with 4 values the boxes ran 9% slower that
      // way, with the same registers, so smaller tiles keep the owner's scan).
      VALUE_T other_aggregate;
      if (ITEMS >= 8u) {
        other_aggregate = vk_blocked_aggregate(stuck);
      } else {
        VALUE_T other[ITEMS], other_prefix;
        vk_blocked_scan(stuck, other, other_prefix, other_aggregate);
      }
#elif defined(OWNER_ORDER_FALLBACK)
      // The stuck tile's vectors are folded as they load (each vector's total, then the owner's row scans)
      // rather than held beside the workgroup's own tile: on an H100 the u32 scan at 2^28 took 716 us so and
      // 744 with the held tile (f32 749 and 755), the same 40 registers either way.
      ROW_T other_vector_totals[2], other_prefix[2], other_totals[2];
      other_vector_totals[0] = vk_row_identity();
      other_vector_totals[1] = vk_row_identity();
      {
        const uint first_ = vk_tile_first_vector(stuck);
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
          const VEC_T v = vk_tile_load(first_ + k * WG_SIZE);
          VALUE_T t = v[0];
          [[unroll]] for (uint c = 1u; c < VEC_N; ++c) t = vk_op(t, v[c]);
          other_vector_totals[k / ROW_N][k % ROW_N] = t;
        }
      }
      scan_rows(other_vector_totals, other_prefix, other_totals);
#else
      // Integer operators are associative and commutative bit for bit, so one workgroup reduction in any
      // order gives the owner's aggregate (two barriers instead of the owner's row scans).
      VALUE_T other_total = vk_identity();
      {
        const uint first_ = vk_tile_first_vector(stuck);
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
          const VEC_T v = vk_tile_load(first_ + k * WG_SIZE);
          [[unroll]] for (uint c = 0u; c < VEC_N; ++c) other_total = vk_op(other_total, v[c]);
        }
      }
      other_total = vk_workgroup_reduce(other_total);
#endif
      if (tid == 0u) {
#if defined(VKPRIM_ORDERED)
        const VALUE_T stuck_aggregate = other_aggregate;
#elif defined(OWNER_ORDER_FALLBACK)
        const VALUE_T stuck_aggregate = chain_rows(other_totals);
#else
        const VALUE_T stuck_aggregate = other_total;
#endif
        vk_stat_add(STAT_FALLBACKS, 1u);
        if (stuck == 0u) {
          const VALUE_T inclusive = has_carry ? vk_op(carry_in, stuck_aggregate) : stuck_aggregate;
          vk_state_publish(0u, STATE_INCLUSIVE, inclusive);
          sh_set_prefix(vk_op(inclusive, sh_get_prefix()));
          sh_set(W_ACTION, LOOK_DONE);
        } else {
          vk_state_publish(stuck, STATE_AGGREGATE, stuck_aggregate);
          sh_set_prefix(vk_op(stuck_aggregate, sh_get_prefix()));
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
#if defined(VKPRIM_FALLBACK)
      if (!skip) vk_state_publish(tile, STATE_INCLUSIVE, vk_op(sh_get_prefix(), aggregate));
#else
      vk_state_publish(tile, STATE_INCLUSIVE, vk_op(sh_get_prefix(), aggregate));
#endif
      if ((pc.param2 & 0x80000000u) == 0u) {
        vk_stat_add(STAT_POLLS, steps);
        vk_stat_max(STAT_DEPTH, depth);
      }
    }
  }
  barrier();

  // Output: the tile prefix op the tile-local scan (tile 0 without a carry-in stays bit-exact, e.g. -0.0).
  const VALUE_T tile_prefix = sh_get_prefix();
  const bool prefixed = tile != 0u || has_carry;
#if defined(VKPRIM_ORDERED) && !defined(VKPRIM_NO_SUBGROUPS)
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_pick(prefixed, vk_op(tile_prefix, scanned[k]), scanned[k]);
  vk_blocked_store_rows(tile, scanned);
#elif defined(VKPRIM_ORDERED)
  const uint first = vk_blocked_first(tile);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) vk_blocked_store(first, k, prefixed ? vk_op(tile_prefix, scanned[k]) : scanned[k]);
#else
  const uint first = vk_tile_first_vector(tile);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    VEC_T y = scanned[k];
    if (prefixed) [[unroll]] for (uint c = 0u; c < VEC_N; ++c) y[c] = vk_op(tile_prefix, y[c]);
    vk_tile_store(first + k * WG_SIZE, y);
  }
#endif
  if (tid == 0u && tile == vk_scan_group_count - 1u && vk_scan_flag(SCAN_CARRY_OUT_SLOT))
    vk_scan_write_carry_out(prefixed ? vk_op(tile_prefix, aggregate) : aggregate);
}
