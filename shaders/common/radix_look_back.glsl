// The per-digit decoupled look-back of the chained radix digit passes (Adinets & Merrill, "Onesweep: A Faster
// Least Significant Digit Radix Sort for GPUs", 2022), with the decoupled fallback of Smith, Levien & Owens
// ("Decoupled Fallback", SPAA 2025), for segmented_sort/chained.comp (one chain of tiles per large segment).
// Not common/look_back.glsl, whose subgroup walks one chain over the tiles: here invocation d < 256 follows
// digit d's chain alone. sort/onesweep.comp (one chain over the whole input, from tile 0) keeps its own copy
// of these steps: through this file its u32 keys sorted 0.5% slower on an H200 (2^24 401 -> 403 us, 2^26
// 1468 -> 1475; pairs unchanged: docs/PERFORMANCE.md, Radix sort), so a change to one belongs in both.
//
// Tile state: one u32 per (tile, digit), written << 31 | inclusive << 30 | count as the pass sees it, so
// counts stay below 2^30 (the runtimes limit their counts). One region serves every digit pass and nothing
// clears it between passes: even passes store the complement, so a word the previous pass wrote reads as not
// written (bit 31 clear), and a state still only moves forward through one reduction (atomicMax on odd
// passes, atomicMin of the complement on even ones). That needs every pass to write every word a successor
// reads: each tile's words are written by the tile or, when its successor gives up waiting, by that successor
// (below); before pass 0 the region holds ~0 (SORT_STATE_UNWRITTEN), which pass 0 reads as not written.
// (Two regions cleared a pass ahead cost DRAM traffic: the cleared lines left L2 long before the next pass's
// atomics read them back. Plain stores instead of the reductions made u32 pairs 2% slower on NVIDIA.)
// A chain starts at a tile that publishes INCLUSIVE at once: its count plus the keys of smaller digits before
// the chain (rlb_chain_prefix), so every walk ends at a position within the chain's output.
//
// The including kernel uses the Vulkan memory model (SORT_MEMORY_MODEL, common/radix.glsl included first with
// SORT_RANKING), defines LOOKBACK_TILES (predecessors per step), and defines after including:
//   uint rlb_state_word(uint tile, uint digit)  the meta word of a state
//   void rlb_count_keys(uint tile)   adds this pass's digits of the tile's keys to s_fallback (cleared, with
//                                    barriers around: the caller's), padding keys left out
//   uint rlb_chain_prefix(uint tile) the chain's first tile: the keys of smaller digits before the chain, for
//                                    invocation d's digit; called from uniform control flow (it may scan)
#ifndef VKPRIM_RADIX_LOOK_BACK_GLSL
#define VKPRIM_RADIX_LOOK_BACK_GLSL

uint rlb_state_word(uint tile, uint digit);
void rlb_count_keys(uint tile);
uint rlb_chain_prefix(uint tile);

shared uint s_words[2];
#define W_TILE 0
#define W_STUCK 1  // 1 + the predecessor the workgroup must count itself, or 0
// The fallback's digit counts reuse s_count (common/radix.glsl), free once the tile is ranked: the tile's own
// counts are in registers by then. Shared memory sets the tile size (src/sort.cpp).
#define s_fallback s_count

// The look-back's shared words go through relaxed workgroup atomics (barrier() orders the rest).
void sh_set(uint i, uint v) { atomicStore(s_words[i], v, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
uint sh_get(uint i) { return atomicLoad(s_words[i], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }

// A state as this pass sees it (above): even passes store and read its complement.
#define STATE_WRITTEN 0x80000000u
#define STATE_INCLUSIVE 0x40000000u
#define STATE_COUNT_MASK 0x3FFFFFFFu
uint state_view(uint pass) { return (pass & 1u) != 0u ? 0u : 0xFFFFFFFFu; }
uint read_state(uint pass, uint tile, uint digit) {
  return state_view(pass) ^ atomicLoad(meta[rlb_state_word(tile, digit)], gl_ScopeQueueFamily,
                                       gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void publish(uint pass, uint tile, uint digit, uint kind, uint count) {
  const uint index = rlb_state_word(tile, digit), state = STATE_WRITTEN | kind | count;
  if ((pass & 1u) != 0u)
    atomicMax(meta[index], state, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  else
    atomicMin(meta[index], ~state, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

// Invocation d < 256: the keys of digit d before `tile` in its chain (which starts at chain_first), added to
// `prefix` (the chain's prefix where tile == chain_first). LOOKBACK_TILES predecessors per step (independent
// loads, so one step costs one memory latency however many tiles it covers); a predecessor still not written
// after spin_limit polls, or once the tile has taken LOOK_TRIP_LIMIT steps, is counted by the whole workgroup
// from its keys and published for it (counts are exact, so the value equals the owner's), so no workgroup
// waits on one that may never run: no forward-progress assumption. `steps` counts every trip, fallback
// rounds included (a count per loop instead made the keys-only onesweep passes 3% slower on an H200).
// Call from uniform control flow: the fallback rounds hold barriers.
uint rlb_look_back(uint pass, uint tile, uint chain_first, uint spin_limit, uint prefix, inout uint steps) {
  const uint tid = gl_LocalInvocationIndex;
  const bool digit_owner = tid < RADIX_DIGITS;
  uint look = tile - 1u;
  bool done = tile == chain_first || !digit_owner;
  for (;;) {
    if (!done) {
      uint polls = 0u;
      for (;;) {
        uint words[LOOKBACK_TILES];
        [[unroll]] for (uint j = 0u; j < LOOKBACK_TILES; ++j)  // the chain's first tile always ends the walk
          words[j] = j <= look - chain_first ? read_state(pass, look - j, tid) : 0u;
        uint consumed = 0u;
        bool blocked = false;
        [[unroll]] for (uint j = 0u; j < LOOKBACK_TILES; ++j) {
          if (!blocked && !done) {
            if ((words[j] & STATE_WRITTEN) == 0u) {
              blocked = true;
            } else {
              prefix += words[j] & STATE_COUNT_MASK;
              consumed += 1u;
              done = (words[j] & STATE_INCLUSIVE) != 0u;
            }
          }
        }
        steps += 1u;
        if (done) break;
        if (consumed == 0u) {
          polls += 1u;
          if (polls > spin_limit || steps > LOOK_TRIP_LIMIT) {
            atomicMax(s_words[W_STUCK], look + 1u, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
            break;
          }
          continue;
        }
        polls = 0u;
        look -= consumed;
      }
    }
    barrier();
    const uint stuck = sh_get(W_STUCK);
    if (stuck == 0u) break;  // every digit found its inclusive prefix
    const uint other = stuck - 1u;
    for (uint d = tid; d < RADIX_DIGITS; d += WG_SIZE)
      atomicStore(s_fallback[d], 0u, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
    barrier();
    rlb_count_keys(other);
    barrier();
    uint other_prefix = 0u;
    if (other == chain_first) other_prefix = rlb_chain_prefix(other);  // `other` is uniform
    if (digit_owner) {
      const uint c = atomicLoad(s_fallback[tid], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
      publish(pass, other, tid, other == chain_first ? STATE_INCLUSIVE : 0u, other_prefix + c);
    }
    if (tid == 0u) sh_set(W_STUCK, 0u);
    barrier();
  }
  return prefix;
}

#endif  // VKPRIM_RADIX_LOOK_BACK_GLSL
