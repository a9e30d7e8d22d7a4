#version 460
// Vulkan memory model, with every shared access non-private (see shaders/scan/chained.comp): barrier() orders
// the shared traffic; the look-back's shared words go through relaxed workgroup atomics.
#pragma use_vulkan_memory_model
//
// Segmented sort, chained large segments (SEG_CHAINED): one dispatch per digit pass sorts every large segment
// by that digit, as sort/onesweep.comp sorts the whole input (Adinets & Merrill, "Onesweep", 2022), one chain
// of tiles per segment:
//  1. a tile of a segment of several tiles takes its tile number from an atomic ticket (header word
//     SEG_HEADER_TICKETS + pass), so tiles start in order, or from the workgroup index under the launch-order
//     knob (pc.param2 bit 30); tile numbers run over the segments' tile runs (classify.comp);
//  2. it counts its digits and publishes them at once; a segment's first tile publishes INCLUSIVE counts plus
//     the keys of smaller digits in the segment (histogram.comp's counts, summed and scanned by scan.comp);
//  3. invocation d looks back over the tile's predecessors in its segment for digit d
//     (common/radix_look_back.glsl: decoupled look-back with decoupled fallback, so no workgroup waits on one
//     that may never run), publishes its INCLUSIVE count and scatters the ranked tile within the segment.
// The large segments of one tile (the first workgroups of the dispatch, SEG_ENTRY_DOWNSWEEP) rank themselves
// whole in the same dispatch, as the downsweep does. A tile whose digit runs would leave its segment (only
// where segments overlap, the caller's error) writes nothing. SEG_COPY copies each tile instead (the copy back).
// Tile states: the digit table's words (256 per tile), marked not written by histogram.comp every record.
// pc.param: the spin limit; pc.param2: the launch-order bit and, below it, the test knob (every k-th tile
// publishes nothing, so that its successors count it themselves).
// Defines: VKPRIM_KEY64, VKPRIM_VALUE_WORDS (0, 1 or 2), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (>= 256), ITEMS, SUBGROUP_MIN, KEY_FLAGS, STAGE_ROUNDS. Bindings and push constants:
// common/segmented_sort.glsl (bit and digit_mask: this pass's digit; flags: the pass index).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#define SORT_RANKING 1
#define SORT_MEMORY_MODEL 1
#include "common/segmented_sort.glsl"

// As sort/onesweep.comp's (measured there).
#if VKPRIM_VALUE_WORDS == 1
#define LOOKBACK_TILES 2u
#else
#define LOOKBACK_TILES 4u
#endif
#include "common/radix_look_back.glsl"

shared uint s_outside;
SegTile seg;  // this workgroup's tile (uniform)

// Invocation d < 256: the keys of digits smaller than d in the segment, for this pass (scan.comp).
uint seg_smaller_digits(uint pass) {
  const uint tid = gl_LocalInvocationIndex;
  return tid < RADIX_DIGITS ? meta[seg_prefix_word(seg.entry) + pass * RADIX_DIGITS + tid] : 0u;
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint w = vk_workgroup_index();
  // The one-tile segments take the first workgroups: the load of their bounds then needs no header word and
  // issues beside the header's (a dependent load fewer before the keys'). Loading it only in workgroups below
  // pc.segments measured no faster.
  const SegTile single = seg_whole_tile(seg_single_word(min(w, pc.segments - 1u)));
  const uint singles = seg_single_count();
  if (w >= seg_tiles() + singles) return;
  const uint pass = sort_pass_index();
  const bool chained = w >= singles;
  const bool copy = seg_flag(SEG_COPY);
  // A one-tile segment takes no ticket, looks back at nothing and stays inside its segment: no words to share
  // before its keys load (chained is uniform).
  uint t = 0u;
  if (chained) {
    if (tid == 0u) {
      const bool ticket = !copy && (pc.param2 & KNOB_LAUNCH_ORDER) == 0u;
      sh_set(W_TILE, ticket ? atomicAdd(meta[SEG_HEADER_TICKETS + pass], 1u, gl_ScopeQueueFamily,
                                        gl_StorageSemanticsBuffer, gl_SemanticsRelaxed)
                            : w - singles);
      sh_set(W_STUCK, 0u);
      atomicStore(s_outside, 0u, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
    }
    barrier();
    t = sh_get(W_TILE);
  }
  seg = chained ? seg_tile(t) : single;
  if (!seg.valid) return;
  if (copy) {
    seg_copy_tile(seg);
    return;
  }
  const bool digit_owner = tid < RADIX_DIGITS;
  sort_load_ordered(seg.first, sort_striped_index(0u), RADIX_SG_SIZE, seg.range.y, t_key);
  const bool chain_first = chained && t == seg.first_tile;
  uint chain_prefix = 0u;
  if (chain_first) chain_prefix = seg_smaller_digits(pass);
  sort_count_tile();
  // Published before the keys are ranked, so successors can look past the tile sooner (onesweep's early counts).
  const uint skip_period = pc.param2 & 0x3FFFFFFFu;
  const bool skip = chained && skip_period != 0u && t % skip_period == skip_period - 1u;
  const uint count = digit_owner ? s_count[tid] : 0u;
  if (chained && digit_owner && !skip) publish(pass, t, tid, chain_first ? STATE_INCLUSIVE : 0u, chain_prefix + count);
  sort_rank_counted_tile();
  sort_stage_keys();  // the staged keys free their registers for the look-back
  uint prefix = chain_prefix, steps = 0u;
  if (chained) prefix = rlb_look_back(pass, t, seg.first_tile, pc.param, chain_prefix, steps);  // uniform
  if (digit_owner) {
    if (chained && !chain_first && !skip) publish(pass, t, tid, STATE_INCLUSIVE, prefix + count);
    // A segment's only tile ranks within it (its digits past digit_mask start past its keys: unchecked).
    const uint offset = chained ? prefix : s_start[tid];
    const uint len = seg.range.y - seg.range.x;
    const uint padding = tid == pc.digit_mask ? sort_range_padding(seg.first, seg.range.y) : 0u;
    if (chained && (offset > len || count - padding > len - offset))
      atomicStore(s_outside, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
    s_base[tid] = seg.range.x + offset - s_start[tid];
  }
  barrier();
  if (chained && atomicLoad(s_outside, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed) != 0u) return;
  sort_scatter_range(seg.first, seg.range.y);
}

uint rlb_state_word(uint tile, uint digit) { return pc.table + tile * RADIX_DIGITS + digit; }

// The keys of `tile`, a predecessor in this workgroup's segment, without padding.
void rlb_count_keys(uint tile) {
  const uint first = seg.range.x + (tile - seg.first_tile) * TILE, shift = sort_shift(0u);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint index = first + k * WG_SIZE + gl_LocalInvocationIndex;
    if (index < seg.range.y) SHARED_ATOMIC_ADD(s_fallback[sort_pass_digit(sort_ordered(SORT_KEY_IN(shift + index)))], 1u);
  }
}

uint rlb_chain_prefix(uint tile) { return seg_smaller_digits(sort_pass_index()); }
