#version 460
// Segmented reduction, first pass: one invocation per segment (workgroup g takes segments g * WG_SIZE ..).
// A segment of at most pc.short_max elements is reduced by its own invocation, in order, and written. Under
// SEG_LISTS a longer one is appended to a list in scratch for the ranges pass (segmented_reduce/ranges.comp):
// up to pc.medium_max elements to the medium list (one subgroup will reduce it), longer ones to the huge list,
// with a run of chunk numbers reserved for their chunks, and each chunk's owner (its huge-list entry) written
// by the whole workgroup. Every append is counted in shared memory first: one global atomic per workgroup and
// counter, so that a few huge segments in one workgroup contend for nothing. The huge segments of a workgroup
// whose entries or chunks find the lists full (possible only where segments overlap: scratch holds what
// max_count elements need without overlap) go to the medium list instead. Nothing waits on another workgroup.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE, ITEMS.
// Bindings and push constants: common/segment_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/segment_io.glsl"
#include "common/segment_range.glsl"

#define SEG_NONE 0xFFFFFFFFu

shared uint medium_count, medium_base, huge_count, huge_chunks, huge_base, chunk_base;
shared uvec3 huge_found[WG_SIZE];  // this workgroup's huge segments: segment, first chunk (of the workgroup's), chunks

// The first of `chunks` chunk numbers reserved at once, or SEG_NONE where they do not fit pc.max_chunks. An
// add rather than a compare-and-swap loop, which would keep many workgroups retrying on one word; the check
// before it leaves the total past max_chunks only by adds that raced it, so the total cannot wrap unless more
// than 2^32 / max_chunks workgroups (with the GPU defaults, thousands) pass the check at once.
uint vk_reserve_chunks(uint chunks) {
  if (chunks > pc.max_chunks || atomicAdd(scratch_words[SEG_HEADER_CHUNKS], 0u) > pc.max_chunks - chunks)
    return SEG_NONE;
  const uint first = atomicAdd(scratch_words[SEG_HEADER_CHUNKS], chunks);
  return first <= pc.max_chunks - chunks ? first : SEG_NONE;
}

// Counts (and for huge segments records) this invocation's segment of `len` > short_max elements in shared
// memory: true for a huge one (huge_found[*slot]), false for a medium one.
bool vk_count_long(uint s, uint len, out uint slot) {
  if (len <= pc.medium_max) {
    slot = 0u;
    return false;
  }
  const uint chunks = vk_segment_chunks(len);
  slot = atomicAdd(huge_count, 1u);
  huge_found[slot] = uvec3(s, atomicAdd(huge_chunks, chunks), chunks);
  return true;
}

// One invocation per workgroup takes the workgroup's huge-list entries and chunk numbers (after a barrier).
void vk_reserve_huge() {
  if (huge_count == 0u) return;
  huge_base = atomicAdd(scratch_words[SEG_HEADER_HUGE], huge_count);
  chunk_base = vk_reserve_chunks(huge_chunks);
}

// Fills huge entry huge_base + slot: false where it or the chunks did not fit (the segment is then medium).
bool vk_list_huge(uint slot) {
  const uint entry = huge_base + slot;
  if (entry >= pc.max_huge) return false;
  const uvec3 h = huge_found[slot];
  const bool reserved = chunk_base != SEG_NONE;
  const uint at = pc.huge_list + entry * SEG_HUGE_WORDS;
  scratch_words[at] = h.x;
  scratch_words[at + 1u] = chunk_base + h.y;
  scratch_words[at + 2u] = reserved ? h.z : 0u;  // 0: the ranges passes skip the entry
  return reserved;
}

void main() {
  const uint group = vk_workgroup_index();
  const bool indirect = vk_seg_flag(SEG_INDIRECT);
  if (group >= (indirect ? vk_indirect_groups(pc.entry) : pc.group_count)) return;
  const uint count = indirect ? vk_indirect_count(pc.entry) : pc.segments;
  const bool lists = vk_seg_flag(SEG_LISTS);
  const uint tid = gl_LocalInvocationIndex;
  if (lists && tid == 0u) {
    medium_count = 0u;
    huge_count = 0u;
    huge_chunks = 0u;
    huge_base = 0u;
    chunk_base = SEG_NONE;
  }
  if (lists) barrier();
  const uint s = group * WG_SIZE + tid;
  bool medium = false, huge = false;
  uint slot = 0u;
  if (s < count) {
    const uvec2 range = vk_segment_bounds(s);
    const uint len = range.y - range.x;
    if (len <= pc.short_max) out_values[pc.out_offset + s] = vk_range_share(range.x, range.y, 0u, 1u);
    else if (lists) huge = vk_count_long(s, len, slot);
    medium = lists && len > pc.short_max && !huge;
  }
  if (!lists) return;
  barrier();
  if (tid == 0u) vk_reserve_huge();
  barrier();
  if (huge && !vk_list_huge(slot)) medium = true;
  uint medium_slot = 0u;
  if (medium) medium_slot = atomicAdd(medium_count, 1u);
  barrier();
  if (tid == 0u && medium_count > 0u) medium_base = atomicAdd(scratch_words[SEG_HEADER_MEDIUM], medium_count);
  barrier();
  if (medium) scratch_words[pc.medium_list + medium_base + medium_slot] = s;
  if (chunk_base == SEG_NONE) return;
  for (uint k = 0u; k < huge_count && huge_base + k < pc.max_huge; ++k) {
    const uvec3 h = huge_found[k];
    for (uint c = tid; c < h.z; c += WG_SIZE) scratch_words[pc.owners + chunk_base + h.y + c] = huge_base + k;
  }
}
