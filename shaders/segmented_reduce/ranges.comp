#version 460
// Segmented reduction, the ranges pass: the segments the first pass (segmented_reduce/segments.comp) left to
// teams, on a grid of pc.group_count workgroups, each looping over its share of the work:
//   - medium segments: one team (a subgroup; a workgroup in the emulation) per segment, its lanes striding
//     over it (common/segment_range.glsl), its reduction written to the output;
//   - chunks of huge segments: one workgroup per chunk of pc.chunk elements, its value written to
//     partials[chunk]; the chunks of one segment are consecutive partials;
//   - SEG_COMBINE (a second dispatch, binding 0 then holds the partials): one workgroup per huge segment,
//     combining its chunks' partials in chunk order into its output.
// SEG_LISTS: the work is the first pass's lists (a chunk whose owner entry does not claim it belongs to no
// listed segment and is skipped); SEG_FIXED: segment_size decides, every segment is of one kind.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (a multiple of the subgroup size), ITEMS. Bindings: common/segment_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/segment_io.glsl"
#include "common/segment_range.glsl"
#include "common/workgroup.glsl"

// A team reduces one medium segment: a subgroup (full subgroups: the plan takes the emulation where it
// cannot require them), or the whole workgroup in the emulation.
#if defined(VKPRIM_NO_SUBGROUPS)
#define TEAM_LANES WG_SIZE
#define TEAM_LANE gl_LocalInvocationIndex
#define TEAM_ID 0u
#define TEAMS 1u
VALUE_T vk_team_reduce(VALUE_T x) { return vk_workgroup_reduce(x); }
#else
#define TEAM_LANES gl_SubgroupSize
#define TEAM_LANE gl_SubgroupInvocationID
#define TEAM_ID gl_SubgroupID
#define TEAMS gl_NumSubgroups
VALUE_T vk_team_reduce(VALUE_T x) { return vk_subgroup_reduce(x); }
#endif

// One piece of work: input range [range.x, range.y), written to element `dest` of the output (medium,
// combine) or of the partials (chunks); skipped unless valid.
struct Work {
  uvec2 range;
  uint dest;
  bool valid;
};

uint vk_fixed_chunks() { return vk_segment_chunks(pc.segment_size); }

uint vk_medium_items() {
  if (vk_seg_flag(SEG_LISTS)) return min(scratch_words[SEG_HEADER_MEDIUM], pc.segments);
  const bool medium = pc.segment_size > pc.short_max && pc.segment_size <= pc.medium_max;
  return medium ? pc.segments : 0u;
}

uint vk_huge_items() {
  if (vk_seg_flag(SEG_LISTS)) return min(scratch_words[SEG_HEADER_HUGE], pc.max_huge);
  return pc.segment_size > pc.medium_max ? pc.segments : 0u;
}

uint vk_chunk_items() {
  if (vk_seg_flag(SEG_LISTS)) return min(scratch_words[SEG_HEADER_CHUNKS], pc.max_chunks);
  return pc.segment_size > pc.medium_max ? pc.segments * vk_fixed_chunks() : 0u;
}

// Huge segment j: its segment, first chunk and chunks (0: not reserved, reduced as a medium segment).
uvec3 vk_huge_entry(uint j) {
  if (!vk_seg_flag(SEG_LISTS)) return uvec3(j, j * vk_fixed_chunks(), vk_fixed_chunks());
  const uint at = pc.huge_list + j * SEG_HUGE_WORDS;
  return uvec3(scratch_words[at], scratch_words[at + 1u], scratch_words[at + 2u]);
}

Work vk_medium_work(uint item) {
  const uint s = vk_seg_flag(SEG_LISTS) ? scratch_words[pc.medium_list + item] : item;
  return Work(vk_segment_bounds(s), s, true);
}

// Chunk c: the owner entry claims it, or it is skipped (the run of chunks a full list could not hold).
Work vk_chunk_work(uint c) {
  uvec3 h;
  bool valid = true;
  if (vk_seg_flag(SEG_LISTS)) {
    const uint entry = scratch_words[pc.owners + c];
    valid = entry < vk_huge_items();
    h = vk_huge_entry(valid ? entry : 0u);
    valid = valid && c >= h.y && c - h.y < h.z;
  } else {
    h = uvec3(c / vk_fixed_chunks(), 0u, 0u);
    h.y = h.x * vk_fixed_chunks();
  }
  const uvec2 segment = vk_segment_bounds(h.x);
  const uint first = min(segment.x + (c - h.y) * pc.chunk, segment.y);
  return Work(uvec2(first, first + min(pc.chunk, segment.y - first)), c, valid);
}

Work vk_combine_work(uint j) {
  const uvec3 h = vk_huge_entry(j);
  return Work(uvec2(h.y, h.y + h.z), h.x, h.z > 0u);
}

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  if (vk_seg_flag(SEG_COMBINE)) {
    const uint items = vk_huge_items();
    for (uint j = group; j < items; j += pc.group_count) {
      const Work w = vk_combine_work(j);
      if (!w.valid) continue;
      const VALUE_T total = vk_workgroup_reduce(vk_range_share(w.range.x, w.range.y, tid, WG_SIZE));
      if (tid == 0u) out_values[pc.out_offset + w.dest] = total;
    }
    return;
  }
  const uint medium = vk_medium_items();
  for (uint item = group * TEAMS + TEAM_ID; item < medium; item += pc.group_count * TEAMS) {
    const Work w = vk_medium_work(item);
    const VALUE_T total = vk_team_reduce(vk_range_share(w.range.x, w.range.y, TEAM_LANE, TEAM_LANES));
    if (TEAM_LANE == 0u) out_values[pc.out_offset + w.dest] = total;
  }
  const uint chunks = vk_chunk_items();
  for (uint c = group; c < chunks; c += pc.group_count) {
    const Work w = vk_chunk_work(c);
    if (!w.valid) continue;
    const VALUE_T total = vk_workgroup_reduce(vk_range_share(w.range.x, w.range.y, tid, WG_SIZE));
    if (tid == 0u) partial_values[pc.partial_offset + w.dest] = total;
  }
}
