#version 460
#pragma use_vulkan_memory_model
// Single-pass stream compaction (Select, and the first pass of Partition): chained tiles with decoupled
// look-back (Merrill & Garland 2016) over the tiles' kept counts, and decoupled fallback (Smith, Levien &
// Owens, SPAA 2025) so it terminates without forward progress between workgroups (lavapipe, Apple, Mali).
//  1. the tile index comes from an atomic ticket, so tiles start in order whatever the scheduler does, or
//     where the launch-order knob is set (ContextOptions::tile_order) from the workgroup index;
//  2. the tile is loaded (16-byte vectors), the predicate evaluated and the kept elements ranked in input
//     order with one workgroup scan (common/select_tile.glsl); the kept count is published at once;
//  3. the tile stays in registers through the look-back (no staging before it);
//  4. subgroup 0 looks back over as many predecessors as it has lanes and sums their counts up to the
//     first inclusive prefix; after pc.knobs & 0xFFFF not-ready polls of one predecessor the workgroup
//     counts that predecessor's tile from its input itself and publishes it with atomicMax;
//  5. the tile publishes its inclusive prefix and writes its elements row by row through per-subgroup
//     slices of shared memory (vk_select_write_tile, coalesced): kept ones to output[prefix ..], rejected
//     ones (Partition) to the spill in scratch at [tile start - prefix ..], which
//     shaders/select/copy_rejected.comp moves behind the kept ones once the total is known, or with
//     REJECTED_ORDER 1 straight to output[n - 1 - (tile start - prefix) ..] downwards.
//  The last tile writes the total to selected_count and to header word 4 of the tile state.
// pc.knobs bit 31: no look-back statistics; bit 30: launch order. Test knob: (pc.knobs >> 16) & 0x3FFF = k > 0
// makes every k-th tile (never tile 0) publish nothing, so every successor that reaches it must count it
// itself.
// The scoped atomics put this kernel under the Vulkan memory model; the pragma makes every shared access
// non-private, so barrier() and the staging's subgroup barriers (common/select_tile.glsl) order them.
// Defines: VKPRIM_TYPE_* (the predicate's type), VKPRIM_NO_SUBGROUPS, VKPRIM_STATE64
// (one u64 state word per tile, else 16-bit parts: common/tile_state.glsl), VKPRIM_PARTITION (Partition's
// kernel: writes the rejected elements to the spill, or reversed to the output). Specialization: WG_SIZE
// (power of two), ITEMS (1..8 vectors of 16 bytes per invocation), REJECTED_ORDER (Partition).
// Bindings and push: common/select_io.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_STATE_U32 1
#if defined(VKPRIM_PARTITION)
#define VKPRIM_SELECT_REVERSIBLE 1
#endif
#include "common/config.glsl"
#include "common/select_io.glsl"
#include "common/workgroup_count_scan.glsl"
#include "common/select_tile.glsl"
#include "common/tile_state.glsl"
#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_ballot : require
#endif

#define STATE_TOTAL_WORD 4u   // header word: the total kept count (read by copy_rejected.comp)
#if defined(VKPRIM_PARTITION)
// 0: the rejected elements in input order, through the spill; 1: reversed, straight to the output.
layout(constant_id = 10) const uint REJECTED_ORDER = 0u;
#endif

shared uint s_words[4];
#define W_TILE 0
#define W_ACTION 1    // LOOK_ON, LOOK_DONE, or LOOK_FALLBACK + the tile to count ourselves
#define W_LOOK 2      // next predecessor to inspect
#define W_PREFIX 3    // kept elements of the predecessors summed so far

void sh_set(uint i, uint v) { atomicStore(s_words[i], v, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
uint sh_get(uint i) { return atomicLoad(s_words[i], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }

#define LOOK_ON 0u
#define LOOK_DONE 1u
#define LOOK_FALLBACK 2u

// Not common/look_back.glsl (the scan's): through it this kernel ran 1.1-1.3% slower on an H200 at 2^24 and
// 2^28 (docs/PERFORMANCE.md, "Select and Partition"), so it keeps this copy until the shared one matches.
// Run by subgroup 0 alone: lane i inspects predecessor look - i; ready counts up to the first inclusive
// prefix are summed into `prefix`. Returns LOOK_DONE or LOOK_FALLBACK + the predecessor that stayed not
// ready for more than `spin_limit` polls, or at all once the tile's look-back has taken LOOK_TRIP_LIMIT
// steps (`steps` counts them over every call). `look` and `prefix` are uniform.
uint look_back(uint spin_limit, inout uint look, inout uint prefix, inout uint depth, inout uint steps) {
  uint polls = 0u;
  for (;;) {
    steps += 1u;
#if !defined(VKPRIM_NO_SUBGROUPS)
    const uint lane = gl_SubgroupInvocationID;
    // Lanes before tile 0 act as an inclusive 0. No lane branches apart before the ballots below
    // (docs/ALGORITHMS.md, "Reconvergence"): those lanes read tile 0's state too, and drop it.
    const bool in_range = lane <= look;
    uint read;
    const uint f = vk_state_read(look - min(lane, look), read);
    const uint flag = in_range ? f : STATE_INCLUSIVE;
    const uint value = in_range ? read : 0u;
    const uvec4 inclusive = subgroupBallot(flag == STATE_INCLUSIVE);
    const uvec4 not_ready = subgroupBallot(flag == STATE_NOT_READY);
    const bool any_inclusive = any(notEqual(inclusive, uvec4(0u)));
    const uint stop = any_inclusive ? subgroupBallotFindLSB(inclusive) : gl_SubgroupSize;
    const uint blocked = any(notEqual(not_ready, uvec4(0u))) ? subgroupBallotFindLSB(not_ready) : gl_SubgroupSize;
    if (blocked < stop) {
      if (blocked > 0u) {
        prefix += subgroupAdd(lane < blocked ? value : 0u);
        look -= blocked;
        depth += blocked;
        polls = 0u;
      }
      polls += 1u;
      if (polls > spin_limit || steps > LOOK_TRIP_LIMIT) return LOOK_FALLBACK + look;
      continue;
    }
    prefix += subgroupAdd(lane <= stop ? value : 0u);
    if (any_inclusive) {
      depth += stop + 1u;
      return LOOK_DONE;
    }
    look -= gl_SubgroupSize;
    depth += gl_SubgroupSize;
#else
    uint value;
    const uint flag = vk_state_read(look, value);
    if (flag == STATE_NOT_READY) {
      polls += 1u;
      if (polls > spin_limit || steps > LOOK_TRIP_LIMIT) return LOOK_FALLBACK + look;
      continue;
    }
    polls = 0u;
    prefix += value;
    depth += 1u;
    if (flag == STATE_INCLUSIVE) return LOOK_DONE;
    look -= 1u;
#endif
  }
  return LOOK_FALLBACK + look;  // only where the driver cuts long loops short: never claim a prefix
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = vk_select_count();
  const uint tiles = vk_select_tiles(n);
  if (vk_workgroup_index() >= tiles) return;
  if (tid == 0u) sh_set(W_TILE, vk_tile_index(pc.knobs));
  barrier();
  const uint tile = sh_get(W_TILE);

  uvec4 vectors[ITEMS];
  const uint keep = vk_select_load_tile(tile, n, vectors);
  uvec4 rank_in_row, row_total;
  const uint kept = vk_select_rank_rows(keep, rank_in_row, row_total);
  const uint spin_limit = pc.knobs & 0xFFFFu;
  const uint skip_period = (pc.knobs >> 16u) & 0x3FFFu;
  const bool skip = tile != 0u && skip_period != 0u && tile % skip_period == skip_period - 1u;
  if (tid == 0u) {
    if (tile == 0u) vk_state_publish(0u, STATE_INCLUSIVE, kept);
    else if (!skip) vk_state_publish(tile, STATE_AGGREGATE, kept);
    sh_set(W_LOOK, tile - 1u);
    sh_set(W_PREFIX, 0u);
  }
  const uint tile_start = tile * TILE_ELEMENTS;
  const uint valid = min(n - min(n, tile_start), TILE_ELEMENTS);
  barrier();

  if (tile != 0u) {
    uint depth = 0u, steps = 0u;
    for (;;) {
#if !defined(VKPRIM_NO_SUBGROUPS)
      const bool looker = gl_SubgroupID == 0u;
#else
      const bool looker = tid == 0u;
#endif
      if (looker) {
        uint look = sh_get(W_LOOK);
        uint prefix = sh_get(W_PREFIX);
        const uint action = look_back(spin_limit, look, prefix, depth, steps);
        if (tid == 0u) {
          sh_set(W_LOOK, look);
          sh_set(W_PREFIX, prefix);
          sh_set(W_ACTION, action);
        }
      }
      barrier();
      const uint action = sh_get(W_ACTION);
      barrier();
      if (action == LOOK_DONE) break;
      // Fallback: count the stuck predecessor's tile ourselves and publish it (never downgrading a state).
      const uint stuck = action - LOOK_FALLBACK;
      const uint stuck_kept = vk_select_count_tile_low_registers(stuck, n);
      if (tid == 0u) {
        vk_stat_add(STAT_FALLBACKS, 1u);
        sh_set(W_PREFIX, sh_get(W_PREFIX) + stuck_kept);
        if (stuck == 0u) {
          vk_state_publish(0u, STATE_INCLUSIVE, stuck_kept);
          sh_set(W_ACTION, LOOK_DONE);
        } else {
          vk_state_publish(stuck, STATE_AGGREGATE, stuck_kept);
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
      if (!skip) vk_state_publish(tile, STATE_INCLUSIVE, sh_get(W_PREFIX) + kept);
      if ((pc.knobs & 0x80000000u) == 0u) {
        vk_stat_add(STAT_POLLS, steps);
        vk_stat_max(STAT_DEPTH, depth);
      }
    }
    barrier();
  }

  const uint prefix = sh_get(W_PREFIX);
#if defined(VKPRIM_PARTITION)
  // Reversed order puts the r-th rejected element at n - 1 - r: known now, so no spill.
  const uint rejected_to = REJECTED_ORDER == 1u ? REJECTED_TO_OUTPUT_REVERSED : REJECTED_TO_SPILL;
  const uint rejected_base = REJECTED_ORDER == 1u ? n - 1u - (tile_start - prefix) : tile_start - prefix;
  vk_select_write_tile(vectors, keep, rank_in_row, row_total, tile_start, valid, prefix, rejected_base,
                       rejected_to);
#else
  const uint rejected_to = REJECTED_DROPPED;  // a constant: Select's kernel carries no code for rejected ones
  vk_select_write_tile(vectors, keep, rank_in_row, row_total, tile_start, valid, prefix, tile_start - prefix,
                       rejected_to);
#endif
  if (tid == 0u && tile == tiles - 1u) {
    vk_select_write_count(prefix + kept);
    state_words[STATE_TOTAL_WORD] = prefix + kept;
  }
}
