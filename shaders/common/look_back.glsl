// The decoupled look-back of the chained kernels (Merrill & Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back", 2016) with the bounded polling of decoupled fallback (Smith, Levien & Owens,
// "Decoupled Fallback", SPAA 2025), written once for every chained kernel that walks one chain with a
// subgroup's lanes over the tiles. The chained scan uses it. Select / Partition and the keyed kernels keep
// copies of the same steps for now: through this function they measured slower on an H200 (their comments
// say how much). Onesweep keeps its own: it follows one chain per digit, a digit per lane.
//
// Run by subgroup 0 alone (invocation 0 on the emulation path). A step loads LB_WINDOWS subgroup-wide
// windows of predecessor states at once (lane i of window j reads predecessor look - j * subgroup size - i,
// so each window is one contiguous read), then walks them in order: the ready summaries up to the first
// inclusive one are folded in front of `prefix` and end the look-back; a not-ready predecessor ends the
// step after folding the summaries before it, and is polled again, or (LB_FALLBACK) handed back for the
// workgroup to reduce after more than `spin_limit` polls that saw no progress, or at once when the tile's
// look-back has taken LOOK_TRIP_LIMIT steps (`steps` counts them over every call: docs/ALGORITHMS.md,
// "Loop budget"). Returns LOOK_DONE, LOOK_FALLBACK + the stuck predecessor, or (without LB_FALLBACK, where
// the driver cut the loop short) LOOK_ON: call again. `look` and `prefix` are uniform.
//
// The including kernel defines, before including this file:
//   LB_T             the summary a tile publishes (a value, a kept count, a run summary)
//   LB_WINDOWS       windows per step (1..8; may be a specialization constant, then LB_MAX_WINDOWS
//                    bounds it, a literal: 8 where undefined)
//   LB_FALLBACK      0 or 1
// and these functions:
//   uint lb_read(uint tile, out LB_T s)   the tile's state flag (STATE_*) and summary
//   LB_T lb_empty()                       the summary of no elements (what lanes before tile 0 hold)
//   LB_T lb_pick(bool c, LB_T a, LB_T b)  c ? a : b without a branch (docs/ALGORITHMS.md, "Reconvergence":
//                                          no lane branches apart before the ballots)
//   void lb_prepend(LB_T s, uint taken, inout LB_T prefix)
//       prefix = (lanes 0 .. taken - 1 of the window combined, lane 0 the nearest, so the latest) then
//       prefix; called by every lane of the subgroup with taken uniform, 1 <= taken <= subgroup size
//   void lb_prepend_one(LB_T s, inout LB_T prefix)   the emulation path's single predecessor
// Requires common/tile_state.glsl (STATE_*) and, with subgroups, GL_KHR_shader_subgroup_ballot.
#ifndef VKPRIM_LOOK_BACK_GLSL
#define VKPRIM_LOOK_BACK_GLSL

#include "common/config.glsl"

#ifndef LB_MAX_WINDOWS
#define LB_MAX_WINDOWS 8
#endif

#define LOOK_ON 0u
#define LOOK_DONE 1u
#define LOOK_FALLBACK 2u

uint look_back(uint spin_limit, inout uint look, inout LB_T prefix, inout uint depth, inout uint steps) {
  uint polls = 0u;
  for (;;) {
    steps += 1u;
#if !defined(VKPRIM_NO_SUBGROUPS)
    const uint lane = gl_SubgroupInvocationID;
    uint flags[LB_MAX_WINDOWS];
    LB_T summaries[LB_MAX_WINDOWS];
    [[unroll]] for (uint j = 0u; j < LB_WINDOWS; ++j) {
      const uint distance = j * gl_SubgroupSize + lane;
      // Predecessors before tile 0 act as an empty inclusive summary. No lane branches apart before the
      // ballots below: those lanes read tile 0's state too, and drop it.
      const bool in_range = distance <= look;
      LB_T s;
      const uint f = lb_read(look - min(distance, look), s);
      flags[j] = in_range ? f : STATE_INCLUSIVE;
      summaries[j] = lb_pick(in_range, s, lb_empty());
    }
    [[unroll]] for (uint j = 0u; j < LB_WINDOWS; ++j) {
      const uvec4 inclusive = subgroupBallot(flags[j] == STATE_INCLUSIVE);
      const uvec4 not_ready = subgroupBallot(flags[j] == STATE_NOT_READY);
      const bool any_inclusive = any(notEqual(inclusive, uvec4(0u)));
      const uint stop = any_inclusive ? subgroupBallotFindLSB(inclusive) : gl_SubgroupSize;
      const uint blocked = any(notEqual(not_ready, uvec4(0u))) ? subgroupBallotFindLSB(not_ready) : gl_SubgroupSize;
      if (blocked < stop) {
        // Fold the ready summaries before the blocked predecessor, then poll it again (or fall back).
        if (blocked > 0u) {
          lb_prepend(summaries[j], blocked, prefix);
          look -= blocked;
          depth += blocked;
          polls = 0u;
        }
        polls += 1u;
        if (LB_FALLBACK != 0 && (polls > spin_limit || steps > LOOK_TRIP_LIMIT)) return LOOK_FALLBACK + look;
        break;
      }
      lb_prepend(summaries[j], min(stop + 1u, gl_SubgroupSize), prefix);
      if (any_inclusive) {
        depth += stop + 1u;
        return LOOK_DONE;
      }
      look -= gl_SubgroupSize;
      depth += gl_SubgroupSize;
    }
#else
    // Emulation: one predecessor per step.
    LB_T s;
    const uint flag = lb_read(look, s);
    if (flag == STATE_NOT_READY) {
      polls += 1u;
      if (LB_FALLBACK != 0 && (polls > spin_limit || steps > LOOK_TRIP_LIMIT)) return LOOK_FALLBACK + look;
      continue;
    }
    polls = 0u;
    lb_prepend_one(s, prefix);
    depth += 1u;
    if (flag == STATE_INCLUSIVE) return LOOK_DONE;
    look -= 1u;
#endif
  }
  // Reached only where the driver cuts long loops short (llvmpipe stops every loop after 65535 iterations
  // and falls through): never claim a prefix that was not found. With fallback, reduce the predecessor
  // waited for; without, ask to be called again.
  return LB_FALLBACK != 0 ? LOOK_FALLBACK + look : LOOK_ON;
}

#endif  // VKPRIM_LOOK_BACK_GLSL
