#version 460
// Segmented sort, first pass: one invocation per segment (workgroup g takes segments g * WG_SIZE ..) sorts
// each into its size class (CUB's DeviceSegmentedSort: small, medium and large segments; Merrill et al.) and
// lists it in scratch for the passes after it:
//   - 2..small_max keys (small): packed into batches of whole segments, many to a tile, that tile.comp sorts in
//     shared memory with one more digit pass over the segment's slot. A workgroup's small segments are weighed
//     (their length, at least min_weight) and scanned; a batch takes those whose weight prefix falls in one
//     span of batch_span, so it holds at most batch_span - 1 + small_max keys (a tile) and 255 segments;
//   - up to medium_max keys (medium): the medium list, ranked whole by one workgroup per digit pass;
//   - longer, up to a block tile (whole): a batch of its own, one workgroup sorting it in shared memory;
//   - longer (large): the large list, with a run of tiles reserved for it and each tile's owner written, for
//     the multi-workgroup digit passes (upsweep, scan, downsweep; or SEG_CHAINED histogram, scan, chained); a
//     large segment of one tile instead goes to the far end of the medium list, for the last pass alone
//     (downsweep or chained).
// 0 or 1 keys: nothing to sort. Appends are counted in shared memory first: one global atomic per workgroup
// and list. Nothing waits on another workgroup. With SEG_ARGS one invocation (a second dispatch, after this
// one) writes the dispatch arguments of the later passes from the list counts, to binding 5.
// Defines: VKPRIM_NO_SUBGROUPS (always: the segment scan is the shared-memory one). Specialization: WG_SIZE
// (256). Bindings and push constants: common/segmented_sort.glsl.
#extension GL_GOOGLE_include_directive : require
#define SORT_WORKGROUP_SCAN 1
#define VKPRIM_INDIRECT_WRITER 1  // the SEG_ARGS dispatch writes the dispatch arguments at binding 5
#include "common/segmented_sort.glsl"

#define SEG_NONE 0xFFFFFFFFu

shared uint s_first[WG_SIZE];  // per batch of this workgroup: its first small segment (index among them)
shared uint s_batches, s_whole, s_medium, s_single, s_large, s_large_tiles;
shared uint s_member_base, s_batch_base, s_large_base, s_tile_base, s_medium_base, s_single_base;
shared uvec4 s_large_found[WG_SIZE];  // this workgroup's large segments: begin, end, first tile (of its own), tiles
shared uint s_wide[WG_SIZE];          // the slots of those with more than SEG_OWN_TILES tiles
shared uint s_wide_count;

// A large segment of at most this many tiles has its tiles' owner words written by its own invocation, the
// others by the whole workgroup, one at a time: a workgroup of 256 one-tile segments wrote them in 256 trips
// of its loop, and classify took 51 us on the H200 (2^24 keys in segments of 4096 or 65536).
#define SEG_OWN_TILES 64u

// The first of `tiles` tile numbers reserved at once, or SEG_NONE where they do not fit pc.max_tiles (only
// overlapping segments, the caller's error, need more). As segmented_reduce/segments.comp's chunks: an add
// after a check rather than a compare-and-swap loop.
uint seg_reserve_tiles(uint tiles) {
  if (tiles > pc.max_tiles || atomicAdd(meta[SEG_HEADER_TILES], 0u) > pc.max_tiles - tiles) return SEG_NONE;
  const uint first = atomicAdd(meta[SEG_HEADER_TILES], tiles);
  return first <= pc.max_tiles - tiles ? first : SEG_NONE;
}

// SEG_ARGS: entry k of the dispatch arguments (binding 5): {x, y, 1, groups, groups}, x spilling into y.
void seg_write_args() {
  for (uint k = 0u; k < SEG_ENTRIES; ++k) {
    const uint groups = k == SEG_ENTRY_BATCHES ? seg_batches()
                        : k == SEG_ENTRY_TILES ? seg_tiles()
                        : k == SEG_ENTRY_LARGE ? seg_large_count()
                        : k == SEG_ENTRY_MEDIUM ? seg_medium_count()
                                                : seg_tiles() + seg_single_count();
    const uint x = min(groups, pc.groups_x);
    const uint at = k * VKPRIM_INDIRECT_ENTRY_WORDS;
    vk_indirect_words[at] = x;
    vk_indirect_words[at + 1u] = x == 0u ? 1u : (groups + x - 1u) / x;
    vk_indirect_words[at + 2u] = 1u;
    vk_indirect_words[at + 3u] = groups;
    vk_indirect_words[at + 4u] = groups;
  }
}

// One invocation per workgroup reserves the workgroup's list entries (after a barrier).
void seg_reserve(uint small_count) {
  if (small_count + s_whole > 0u) s_member_base = atomicAdd(meta[SEG_HEADER_MEMBERS], small_count + s_whole);
  if (s_batches + s_whole > 0u) s_batch_base = atomicAdd(meta[SEG_HEADER_BATCHES], s_batches + s_whole);
  if (s_medium > 0u) s_medium_base = atomicAdd(meta[SEG_HEADER_MEDIUM], s_medium);
  if (s_single > 0u) s_single_base = atomicAdd(meta[SEG_HEADER_SINGLES], s_single);
  if (s_large > 0u) {
    s_large_base = atomicAdd(meta[SEG_HEADER_LARGE], s_large);
    s_tile_base = seg_reserve_tiles(s_large_tiles);
  }
}

void seg_write_batch(uint batch, uint first_member, uint members) {
  meta[pc.batch_list + 2u * batch] = first_member;
  meta[pc.batch_list + 2u * batch + 1u] = members;
}

// Large entry `slot` of this workgroup (its tiles 0 where they could not be reserved: left unsorted), and the
// owners of its tiles, written by the whole workgroup.
void seg_list_large(uint slot) {
  const uint entry = s_large_base + slot;
  if (entry >= pc.max_large) return;
  const uvec4 h = s_large_found[slot];
  const uint at = pc.large_list + entry * SEG_LARGE_WORDS;
  meta[at] = h.x;
  meta[at + 1u] = h.y;
  meta[at + 2u] = s_tile_base + h.z;
  meta[at + 3u] = s_tile_base != SEG_NONE ? h.w : 0u;
}

// The owner words of the tiles of this workgroup's large segments (`slot`: this invocation's, if large).
void seg_write_owners(bool large, uint slot) {
  if (s_tile_base == SEG_NONE) return;
  if (large && s_large_base + slot < pc.max_large && s_large_found[slot].w <= SEG_OWN_TILES) {
    const uvec4 h = s_large_found[slot];
    for (uint c = 0u; c < h.w; ++c) meta[pc.owners + s_tile_base + h.z + c] = s_large_base + slot;
  }
  for (uint i = 0u; i < s_wide_count; ++i) {
    const uint k = s_wide[i];
    const uvec4 h = s_large_found[k];
    if (s_large_base + k >= pc.max_large) continue;
    for (uint c = gl_LocalInvocationIndex; c < h.w; c += WG_SIZE) meta[pc.owners + s_tile_base + h.z + c] = s_large_base + k;
  }
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint group = vk_workgroup_index();
  if (seg_flag(SEG_ARGS)) {
    if (group == 0u && tid == 0u) seg_write_args();
    return;
  }
  const bool indirect = seg_flag(SEG_INDIRECT);
  if (group >= (indirect ? vk_indirect_groups(0u) : pc.group_count)) return;
  const uint count = indirect ? vk_indirect_count(0u) : pc.segments;
  if (tid == 0u) {
    s_batches = 0u;
    s_medium = 0u;
    s_whole = 0u;
    s_single = 0u;
    s_large = 0u;
    s_large_tiles = 0u;
    s_tile_base = SEG_NONE;
    s_wide_count = 0u;
  }
  s_first[tid] = SEG_NONE;
  barrier();
  const uint s = group * WG_SIZE + tid;
  const uvec2 range = s < count ? seg_bounds(s) : uvec2(0u);
  const uint len = range.y - range.x;
  const bool small = len >= 2u && len <= pc.small_max;
  const bool medium = len >= 2u && len > pc.small_max && len <= pc.medium_max;
  const bool whole = len >= 2u && len > pc.medium_max && len <= seg_block_max();
  const bool longer = len >= 2u && len > max(pc.medium_max, seg_block_max());
  const bool single = longer && len <= pc.large_tile;
  const bool large = longer && !single;
  // Small segments: index among this workgroup's (high bits) and weight prefix (low 20 bits: 256 weights of at
  // most 2048, src/segmented_sort.cpp) in one scan.
  uint total;
  const uint before = sort_workgroup_scan(small ? (max(len, pc.min_weight) | (1u << 20u)) : 0u, total);
  const uint small_index = before >> 20u, small_count = total >> 20u;
  const uint batch = (before & 0xFFFFFu) / pc.batch_span;
  uint slot = 0u;
  if (small) {
    atomicMin(s_first[batch], small_index);
    atomicMax(s_batches, batch + 1u);
  }
  if (medium) slot = atomicAdd(s_medium, 1u);
  if (whole) slot = atomicAdd(s_whole, 1u);
  if (single) slot = atomicAdd(s_single, 1u);
  if (large) {
    slot = atomicAdd(s_large, 1u);
    const uint tiles = len / pc.large_tile + (len % pc.large_tile != 0u ? 1u : 0u);
    s_large_found[slot] = uvec4(range, atomicAdd(s_large_tiles, tiles), tiles);
    if (tiles > SEG_OWN_TILES) s_wide[atomicAdd(s_wide_count, 1u)] = slot;
  }
  barrier();
  if (tid == 0u) seg_reserve(small_count);
  barrier();
  if (small) meta[pc.member_list + s_member_base + small_index] = s;
  if (tid < s_batches) {  // every batch of the workgroup starts at a segment (weights <= batch_span)
    const uint next = tid + 1u < s_batches ? s_first[tid + 1u] : small_count;
    seg_write_batch(s_batch_base + tid, s_member_base + s_first[tid], next - s_first[tid]);
  }
  if (medium || single) {
    const uint at = medium ? seg_medium_word(s_medium_base + slot) : seg_single_word(s_single_base + slot);
    meta[at] = range.x;
    meta[at + 1u] = range.y;
  }
  if (whole) {
    const uint member = s_member_base + small_count + slot;
    meta[pc.member_list + member] = s;
    seg_write_batch(s_batch_base + s_batches + slot, member, 1u);
  }
  if (large) seg_list_large(slot);
  if (s_large > 0u) seg_write_owners(large, slot);
}
