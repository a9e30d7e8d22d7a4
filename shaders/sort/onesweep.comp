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
// Tile states, look-back and fallback: common/radix_look_back.glsl (one chain over the whole input, from
// tile 0; the upfront histogram fills the state region with ~0).
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
#include "common/radix_look_back.glsl"

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

  uint steps = 0u;
  const uint prefix = rlb_look_back(pass, tile, 0u, pc.param, tile0_prefix, steps);

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

uint rlb_state_word(uint tile, uint digit) { return META_REGION + tile * RADIX_DIGITS + digit; }

void rlb_count_keys(uint tile) {
  const uint shift = sort_shift(0u), n = sort_count();
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint index = tile * TILE + k * WG_SIZE + gl_LocalInvocationIndex;
    if (index < n) SHARED_ATOMIC_ADD(s_fallback[sort_pass_digit(sort_ordered(SORT_KEY_IN(shift + index)))], 1u);
  }
}

uint rlb_chain_prefix(uint tile) { return smaller_digits(sort_pass_index()); }

void rlb_fell_back(uint tile) { stat_add(META_STAT_FALLBACKS, 1u); }
