#version 460
// Segmented reduction, first pass: one invocation per segment (workgroup g takes segments g * WG_SIZE ..).
// A segment of at most pc.short_max elements is reduced by its own invocation, in order, and written. Under
// SEG_LISTS a longer one is appended to a list in scratch for the ranges pass (segmented_reduce/ranges.comp):
// up to pc.medium_max elements to the medium list (one subgroup will reduce it), longer ones to the huge list,
// with a run of chunk numbers reserved for their chunks, and each chunk's owner (its huge-list entry) written
// by the whole workgroup. A huge segment that finds the huge list or the chunk numbers full (possible only
// where segments overlap: scratch holds what max_count elements need without overlap) goes to the medium list
// instead. Appends are counted in shared memory first, one global atomic per workgroup and list. Nothing waits
// on another workgroup.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE, ITEMS.
// Bindings and push constants: common/segment_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/segment_io.glsl"
#include "common/segment_range.glsl"

shared uint medium_count, medium_base, huge_count;
shared uvec3 huge_found[WG_SIZE];  // this workgroup's listed huge segments: entry, first chunk, chunks

// Reserves `chunks` chunk numbers for huge-list entry `entry` and fills the entry: false where the list or
// the chunk numbers are full. A compare-and-swap loop rather than an add, so the chunk total never wraps when
// overlapping segments ask for more than max_chunks (some invocation's swap succeeds in every round).
bool vk_list_huge(uint s, uint len, out uvec3 found) {
  found = uvec3(0u);
  const uint entry = atomicAdd(scratch_words[SEG_HEADER_HUGE], 1u);
  if (entry >= pc.max_huge) return false;
  const uint chunks = vk_segment_chunks(len);
  uint first = 0u;  // a guess; each failed swap returns the current total
  bool reserved = false;
  while (!reserved && chunks <= pc.max_chunks - min(first, pc.max_chunks)) {
    const uint seen = atomicCompSwap(scratch_words[SEG_HEADER_CHUNKS], first, first + chunks);
    reserved = seen == first;
    first = seen;
  }
  const uint at = pc.huge_list + entry * SEG_HUGE_WORDS;
  scratch_words[at] = s;
  scratch_words[at + 1u] = first;
  scratch_words[at + 2u] = reserved ? chunks : 0u;  // 0: the ranges pass skips the entry
  found = uvec3(entry, first, chunks);
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
  }
  if (lists) barrier();
  const uint s = group * WG_SIZE + tid;
  bool medium = false;
  uint medium_slot = 0u;
  if (s < count) {
    const uvec2 range = vk_segment_bounds(s);
    const uint len = range.y - range.x;
    if (len <= pc.short_max) {
      out_values[pc.out_offset + s] = vk_range_share(range.x, range.y, 0u, 1u);
    } else if (lists) {
      uvec3 found;
      medium = len <= pc.medium_max || !vk_list_huge(s, len, found);
      if (medium) medium_slot = atomicAdd(medium_count, 1u);
      else huge_found[atomicAdd(huge_count, 1u)] = found;
    }
  }
  if (!lists) return;
  barrier();
  if (tid == 0u && medium_count > 0u) medium_base = atomicAdd(scratch_words[SEG_HEADER_MEDIUM], medium_count);
  barrier();
  if (medium) scratch_words[pc.medium_list + medium_base + medium_slot] = s;
  for (uint k = 0u; k < huge_count; ++k) {
    const uvec3 h = huge_found[k];
    for (uint c = tid; c < h.z; c += WG_SIZE) scratch_words[pc.owners + h.y + c] = h.x;
  }
}
