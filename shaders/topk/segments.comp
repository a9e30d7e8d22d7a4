#version 460
// TopK::record_segmented (src/topk.cpp), the top k of each segment: the keys (and values) are copied to scratch,
// SegmentedSort sorts every segment of the copy stably in the plan's order, and the first min(k, length) keys
// of each sorted segment are gathered to its k slots of the output. One kernel, its phase a specialization
// constant (PHASE):
//   copy    an invocation per element of [0, count): the keys (and values) to scratch at the same indices, so
//           the caller's offsets address the copy as they address the input (gaps copied too);
//   gather  ceil(k / WG_SIZE) workgroups per segment, an invocation per slot i < k: slot i of segment s, where
//           i < min(k, end - begin), gets the copy's element begin + i (offsets clamped to count); the other
//           slots are not written. SEGMENTS_INDIRECT (record_segmented_indirect): the segments are the u32 at
//           binding 1 (which the gather reads no values from), clamped to pc.segments (max_segments).
// Specialization: WG_SIZE, PHASE. Defines: VKPRIM_KEY64 (64-bit keys).
#extension GL_GOOGLE_include_directive : require

#include "common/config.glsl"

layout(constant_id = 8) const uint PHASE = 0u;
#define PHASE_COPY 0u
#define PHASE_GATHER 1u

layout(push_constant) uniform SegmentsConstants {
  uint count;          // elements copied; the bound every offset is clamped to
  uint segments;       // gather: the segments
  uint k;              // gather: slots per segment
  uint groups;         // workgroups of the dispatch (those past it return)
  uint seg_groups;     // gather: workgroups per segment, ceil(k / WG_SIZE)
  uint flags;          // SEGMENTS_PAIRS: values move with the keys
  uint keys_shift;     // first element of each binding
  uint values_shift;
  uint copy_shift;
  uint copy_values_shift;
  uint begin_shift;
  uint end_shift;
  uint out_shift;
  uint out_values_shift;
  uint pad0, pad1;
} pc;
#define SEGMENTS_PAIRS 1u
#define SEGMENTS_INDIRECT 2u

#if defined(VKPRIM_KEY64)
#define KEY_T uvec2  // moved as bits
#else
#define KEY_T uint
#endif

layout(set = 0, binding = 0, std430) readonly buffer Keys { KEY_T keys[]; };
layout(set = 0, binding = 1, std430) readonly buffer Values { uint values[]; };
layout(set = 0, binding = 1, std430) readonly buffer SegmentCount { uint segment_count[]; };  // gather, indirect
layout(set = 0, binding = 2, std430) buffer CopyKeys { KEY_T copy_keys[]; };
layout(set = 0, binding = 3, std430) buffer CopyValues { uint copy_values[]; };
layout(set = 0, binding = 4, std430) readonly buffer Begin { uint begin_offsets[]; };
layout(set = 0, binding = 5, std430) readonly buffer End { uint end_offsets[]; };
layout(set = 0, binding = 6, std430) writeonly buffer OutKeys { KEY_T out_keys[]; };
layout(set = 0, binding = 7, std430) writeonly buffer OutValues { uint out_values[]; };

void copy_elements() {
  const uint group = vk_workgroup_index();
  const uint i = group * WG_SIZE + gl_LocalInvocationIndex;
  if (group >= pc.groups || i >= pc.count) return;
  copy_keys[pc.copy_shift + i] = keys[pc.keys_shift + i];
  if ((pc.flags & SEGMENTS_PAIRS) != 0u) copy_values[pc.copy_values_shift + i] = values[pc.values_shift + i];
}

void gather_segments() {
  const uint group = vk_workgroup_index();
  if (group >= pc.groups) return;
  const uint s = group / pc.seg_groups;
  const uint i = (group % pc.seg_groups) * WG_SIZE + gl_LocalInvocationIndex;
  const uint segments = (pc.flags & SEGMENTS_INDIRECT) != 0u ? min(segment_count[pc.values_shift], pc.segments)
                                                             : pc.segments;
  if (s >= segments || i >= pc.k) return;
  const uint begin = min(begin_offsets[pc.begin_shift + s], pc.count);
  const uint end = min(end_offsets[pc.end_shift + s], pc.count);
  if (end <= begin || i >= end - begin) return;
  const uint slot = s * pc.k + i;
  out_keys[pc.out_shift + slot] = copy_keys[pc.copy_shift + begin + i];
  if ((pc.flags & SEGMENTS_PAIRS) != 0u) out_values[pc.out_values_shift + slot] = copy_values[pc.copy_values_shift + begin + i];
}

void main() {
  if (PHASE == PHASE_COPY) copy_elements();
  else gather_segments();
}
