// Bindings, push constants, segment bounds and the scratch lists of the segmented reduction
// (src/segmented_reduce.cpp; both kernels of shaders/segmented_reduce share them):
//   set 0 binding 0: input  (VALUE_T[], and VEC_T[] for 16-byte loads), element shift pc.in_offset
//   set 0 binding 1: output (VALUE_T[]), one value per segment, shift pc.out_offset
//   set 0 binding 2: begin offsets (u32[]), shift pc.begin_offset
//   set 0 binding 3: end offsets (u32[]), shift pc.end_offset
//   set 0 binding 4: scratch words (u32[]): the header (SEG_HEADER_*), the medium list, the huge list
//                    (SEG_HUGE_WORDS words per entry) and the chunk owners, at the word offsets of pc
//   set 0 binding 5: chunk partials (VALUE_T[]), shift pc.partial_offset
//   set 0 binding 6: the record_indirect region (common/indirect.glsl)
// The runtime binds each buffer at an offset aligned to the device's storage alignment and 16 bytes and
// passes the element shift; bindings a pass does not use are bound to a valid range it never reads.
// Segment s is input[begin[s] .. end[s]) (SEG_FIXED: [s * segment_size, (s + 1) * segment_size)), both
// ends clamped to pc.bound, so offsets past the input never reach memory outside it.
#ifndef VKPRIM_SEGMENT_IO_GLSL
#define VKPRIM_SEGMENT_IO_GLSL

#include "common/segment_bounds.glsl"
#include "common/types.glsl"

#define VKPRIM_INDIRECT_BINDING 6
#include "common/indirect.glsl"

layout(push_constant) uniform SegmentConstants {
  uint segments;        // segments of this record (the first pass reads its entry instead under SEG_INDIRECT)
  uint segment_size;    // SEG_FIXED: elements per segment
  uint bound;           // input elements the offsets may address: every offset is clamped to it
  uint in_offset;       // element shift of binding 0
  uint out_offset;      // element shift of binding 1
  uint begin_offset;    // word shift of binding 2
  uint end_offset;      // word shift of binding 3
  uint partial_offset;  // element shift of binding 5
  uint flags;           // SEG_* bits
  uint group_count;     // workgroups of a direct dispatch (linearized across x, y, z)
  uint entry;           // SEG_INDIRECT: the indirect entry of the first pass
  uint short_max;       // segments of at most this many elements are reduced by one invocation
  uint medium_max;      // ... of at most this many by one subgroup; longer ones are huge: chunks of `chunk`
  uint chunk;           // elements per chunk of a huge segment
  uint medium_list;     // word offset of the medium list in binding 4
  uint huge_list;       // word offset of the huge list
  uint owners;          // word offset of the chunk owners
  uint max_huge;        // capacity of the huge list
  uint max_chunks;      // capacity of the chunk owners and partials
} pc;

#define SEG_FIXED 1u      // segments of segment_size elements, no offset buffers
#define SEG_INDIRECT 2u   // the first pass's segment and workgroup counts are entry pc.entry's
#define SEG_LISTS 4u      // the first pass lists medium and huge segments; the ranges pass reads the lists
#define SEG_COMBINE 8u    // the ranges pass combines each huge segment's chunk partials

// Header words (zeroed before the first pass) and the huge list's entry: segment, first chunk, chunks.
#define SEG_HEADER_MEDIUM 0u
#define SEG_HEADER_HUGE 1u
#define SEG_HEADER_CHUNKS 2u
#define SEG_HUGE_WORDS 3u

layout(set = 0, binding = 0, std430) readonly buffer SegmentInValues { VALUE_T in_values[]; };
layout(set = 0, binding = 0, std430) readonly buffer SegmentInVectors { VEC_T in_vectors[]; };
layout(set = 0, binding = 1, std430) writeonly buffer SegmentOutValues { VALUE_T out_values[]; };
layout(set = 0, binding = 2, std430) readonly buffer SegmentBegins { uint begin_words[]; };
layout(set = 0, binding = 3, std430) readonly buffer SegmentEnds { uint end_words[]; };
layout(set = 0, binding = 4, std430) buffer SegmentScratch { uint scratch_words[]; };
layout(set = 0, binding = 5, std430) buffer SegmentPartials { VALUE_T partial_values[]; };

bool vk_seg_flag(uint bit) { return (pc.flags & bit) != 0u; }

// [first, last) of segment s within the input binding's elements (before pc.in_offset), clamped to the
// bound; an end at or before the begin gives an empty range.
uvec2 vk_segment_bounds(uint s) {
  const bool fixed_size = vk_seg_flag(SEG_FIXED);
  const uint begin = fixed_size ? 0u : begin_words[pc.begin_offset + s];
  const uint end = fixed_size ? 0u : end_words[pc.end_offset + s];
  return vk_clamped_segment(fixed_size, s, pc.segment_size, begin, end, pc.bound);
}

// Chunks of a huge segment of `len` elements.
uint vk_segment_chunks(uint len) { return len / pc.chunk + (len % pc.chunk != 0u ? 1u : 0u); }

#endif  // VKPRIM_SEGMENT_IO_GLSL
