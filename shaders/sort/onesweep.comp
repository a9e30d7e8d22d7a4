#version 460
// Vulkan memory model, with every shared access non-private (see shaders/scan/chained.comp): barrier()
// orders the shared traffic; the words the look-back loop reads (tile, stuck tile, fallback counts) go
// through relaxed workgroup atomics.
#pragma use_vulkan_memory_model
//
// Onesweep digit pass (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for
// GPUs", 2022), with the decoupled fallback of Smith, Levien & Owens (SPAA 2025). One dispatch per digit:
//  1. the tile index comes from an atomic ticket (meta[pass]), so tiles start in order, or where the
//     launch-order knob (pc.param2 bit 30, ContextOptions::tile_order) is set from the workgroup index;
//  2. the tile's digits are counted (common/radix.glsl) and invocation d < 256 publishes the tile's count of
//     digit d at once: AGGREGATE; tile 0 publishes INCLUSIVE, and its "prefix" starts at the keys of smaller
//     digits over the whole input (the exclusive scan of the upfront histogram, which tile 0 alone
//     computes), so every look-back ends at a global position; then the keys are ranked stably by digit
//     and staged in shared memory at their tile positions;
//  3. invocation d looks back over predecessors for digit d alone, LOOKBACK_TILES tiles per step, until an
//     INCLUSIVE count;
//  4. it publishes its own INCLUSIVE count, and the staged tile is scattered to that prefix
//     (= keys of smaller digits + digit d in earlier tiles) + rank.
// Tile state: one u32 per (tile, digit), written << 31 | inclusive << 30 | count as the pass sees it, so
// counts stay below 2^30 (the runtime limits max_count). One region serves every pass and nothing clears it:
// even passes store the complement, so a word the previous pass wrote reads as not written (bit 31 clear),
// and a state still only moves forward through one reduction (atomicMax on odd passes, atomicMin of the
// complement on even ones). That needs every pass to write every word a successor reads: each tile's
// words are written by the tile or, when its successor gives up waiting, by that successor (below); the
// upfront histogram fills the region with ~0, which pass 0 reads as not written. (Two regions cleared a
// pass ahead cost DRAM traffic: the cleared lines left L2 long before the next pass's atomics read them
// back. Plain stores instead of the reductions made u32 pairs 2% slower on NVIDIA.)
// Fallback: an invocation whose predecessor stays not written for more than pc.param polls asks for help;
// the whole workgroup then counts that predecessor's digits from its keys itself (counts are exact, so the
// value equals the owner's; for tile 0 it adds the same histogram scan) and publishes them the same way,
// so no workgroup waits on one that may never run: no forward-progress assumption.
// pc.param2 bit 31: no look-back statistics; bit 30: launch order. Test knob: pc.param2 & 0x3FFFFFFF = k > 0
// makes every k-th tile publish nothing, so its successors must count it themselves; k = 1 includes tile 0,
// whose counts a successor then publishes with the histogram scan added (the scan's knob spares tile 0).
// Defines: VKPRIM_KEY64, VKPRIM_KEY8, VKPRIM_KEY16, VKPRIM_VALUE_WORDS, VKPRIM_VALUE_UNIT, VKPRIM_NO_SUBGROUPS,
// VKPRIM_PARTITIONED, VKPRIM_DIRECT_SCATTER.
// Specialization: WG_SIZE (>= 256), ITEMS (keys per invocation), SUBGROUP_MIN, KEY_FLAGS, STAGE_ROUNDS,
// VALUE_UNITS (common/radix.glsl).
// Bindings/push: common/radix.glsl (bit = this pass's first bit, flags carry the pass index).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#define SORT_RANKING 1
#define SORT_RANK_FEW_REGISTERS 1
#define SORT_MEMORY_MODEL 1
#include "common/radix.glsl"

// Predecessor tiles one look-back step reads per digit: four, two for 4-byte values. With two, a pairs tile
// takes more steps (8.1 against 5.0 at 2^26) but reads fewer state words, and u32 pairs sort faster: 2^26
// 2197-2204 against 2227-2234 us, 2^28 9085 against 9209; u32 keys sort slower (1532 against 1523), and
// 8-byte values keep four without a measurement (H100).
#if VKPRIM_VALUE_WORDS == 1
#define LOOKBACK_TILES 2u
#else
#define LOOKBACK_TILES 4u
#endif

shared uint s_words[2];
#define W_TILE 0
#define W_STUCK 1   // 1 + the predecessor the workgroup must count itself, or 0
// The fallback's digit counts reuse s_count (common/radix.glsl), free once the tile is ranked: the
// tile's own counts are in registers by then. Shared memory sets the tile size (src/sort.cpp).
#define s_fallback s_count

void sh_set(uint i, uint v) { atomicStore(s_words[i], v, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }
uint sh_get(uint i) { return atomicLoad(s_words[i], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed); }

uint state_index(uint tile, uint digit) { return META_REGION + tile * RADIX_DIGITS + digit; }
// A state as this pass sees it (the header comment): even passes store and read its complement.
#define STATE_WRITTEN 0x80000000u
#define STATE_INCLUSIVE 0x40000000u
#define STATE_COUNT_MASK 0x3FFFFFFFu
uint state_view(uint pass) { return (pass & 1u) != 0u ? 0u : 0xFFFFFFFFu; }
uint read_state(uint pass, uint tile, uint digit) {
  return state_view(pass) ^ atomicLoad(meta[state_index(tile, digit)], gl_ScopeQueueFamily,
                                       gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void publish(uint pass, uint tile, uint digit, uint kind, uint count) {
  const uint index = state_index(tile, digit), state = STATE_WRITTEN | kind | count;
  if ((pass & 1u) != 0u)
    atomicMax(meta[index], state, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  else
    atomicMin(meta[index], ~state, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void stat_add(uint word, uint v) {
  atomicAdd(meta[word], v, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

// Keys of digits smaller than the invocation's (tid < 256) over the whole input: the exclusive scan of this
// pass's upfront histogram. Tile 0 adds it to its inclusive counts; CUB scans the histograms in a kernel
// of their own, every tile here scanned them itself (two barriers per tile). Call from uniform control flow.
uint smaller_digits(uint pass) {
  const uint tid = gl_LocalInvocationIndex;
  uint total;
  return sort_workgroup_scan(tid < RADIX_DIGITS ? sort_digit_total(pass, tid) : 0u, total);
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint n = sort_count();
  const uint tiles = sort_tiles(n);
  if (vk_workgroup_index() >= tiles) return;
  const uint pass = sort_pass_index();
  if (tid == 0u) {
    const bool launch_order = (pc.param2 & KNOB_LAUNCH_ORDER) != 0u;
    sh_set(W_TILE, launch_order ? vk_workgroup_index()
                                : atomicAdd(meta[META_TICKET + pass], 1u, gl_ScopeQueueFamily,
                                            gl_StorageSemanticsBuffer, gl_SemanticsRelaxed));
    sh_set(W_STUCK, 0u);
  }
  barrier();
  const uint tile = sh_get(W_TILE);

  const bool digit_owner = tid < RADIX_DIGITS;
  sort_load_tile(tile, n);
  // Tile 0's look-back result: the keys of smaller digits (`tile` is uniform, so the branch may hold
  // barriers).
  uint tile0_prefix = 0u;
  if (tile == 0u) tile0_prefix = smaller_digits(pass);
  sort_count_tile();
  // The tile's digit counts are published before its keys are ranked, so successors can look past it
  // sooner (the "early counts" of the paper).
  const uint skip_period = pc.param2 & 0x3FFFFFFFu;
  const bool skip = skip_period != 0u && tile % skip_period == skip_period - 1u;
  const uint count = digit_owner ? s_count[tid] : 0u;
  if (digit_owner && !skip)
    publish(pass, tile, tid, tile == 0u ? STATE_INCLUSIVE : 0u, tile0_prefix + count);
  sort_rank_counted_tile();
  // Staged now (the first round: all of the tile with STAGE_ROUNDS 1), the keys free their registers for
  // the look-back.
  sort_stage_keys();

  // Look-back per digit, LOOKBACK_TILES predecessors per step (independent loads, so one step costs one
  // memory latency however many tiles it covers), with workgroup-wide fallback rounds. Not the shared
  // common/look_back.glsl: every invocation here follows its own digit's chain (a digit per lane, no
  // ballots over tiles), where that one walks one chain with a subgroup's lanes over the tiles. The same
  // steps, chains bounded per segment, are common/radix_look_back.glsl (the segmented sort's); through that
  // file these keys sorted 0.5% slower on an H200, so this copy stays and a change to one belongs in both.
  uint prefix = tile0_prefix, look = tile - 1u, steps = 0u;
  bool done = tile == 0u || !digit_owner;
  for (;;) {
    if (!done) {
      uint polls = 0u;
      for (;;) {
        uint words[LOOKBACK_TILES];
        [[unroll]] for (uint j = 0u; j < LOOKBACK_TILES; ++j)
          words[j] = j <= look ? read_state(pass, look - j, tid) : 0u;  // tile 0 always ends the walk
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
          // steps counts every trip of this tile's look-back, fallback rounds included: a count per loop
          // instead made the keys-only digit passes 3% slower on an H200 (docs/PERFORMANCE.md).
          if (polls > pc.param || steps > LOOK_TRIP_LIMIT) {
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
    const uint shift = sort_shift(0u);
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
      const uint index = other * TILE + k * WG_SIZE + tid;
      if (index < n) SHARED_ATOMIC_ADD(s_fallback[sort_pass_digit(sort_ordered(SORT_KEY_IN(shift + index)))], 1u);
    }
    barrier();
    uint other_prefix = 0u;
    if (other == 0u) other_prefix = smaller_digits(pass);  // `other` is uniform
    if (digit_owner) {
      const uint c = atomicLoad(s_fallback[tid], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
      publish(pass, other, tid, other == 0u ? STATE_INCLUSIVE : 0u, other_prefix + c);
    }
    if (tid == 0u) {
      stat_add(META_STAT_FALLBACKS, 1u);
      sh_set(W_STUCK, 0u);
    }
    barrier();
  }

  if (digit_owner) {
    if (tile != 0u && !skip) publish(pass, tile, tid, STATE_INCLUSIVE, prefix + count);
    s_base[tid] = prefix - s_start[tid];
  }
  if (tid == 0u && (pc.param2 & 0x80000000u) == 0u) {
    stat_add(META_STAT_TILES, 1u);
    stat_add(META_STAT_STEPS, steps);
    atomicMax(meta[META_STAT_DEPTH], steps, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  }
  barrier();
  sort_scatter_tile(tile, n);
  if (digit_owner) sort_store_totals(tile, tiles, tid);
}
