// Bindings and push constants of a one-input, one-output pass (reduce levels, ceilings):
//   set 0 binding 0: input  (as VALUE_T[] and as VEC_T[] for 16-byte loads)
//   set 0 binding 1: output (VALUE_T[])
//   set 0 binding 2: kernels that define VKPRIM_INDIRECT_BINDING 2: the record_indirect region
//                    (common/indirect.glsl); with flags bit 1 the pass's count and group count are entry
//                    pc.entry's, computed on the GPU.
// The runtime binds each buffer at an offset aligned to the device's storage alignment and 16 bytes and
// passes the remaining element shift in in_offset/out_offset, so vector loads are used only when
// in_offset is a multiple of VEC_N (the runtime sets flags bit 0 then).
#ifndef VKPRIM_PASS_IO_GLSL
#define VKPRIM_PASS_IO_GLSL

#include "common/types.glsl"

layout(push_constant) uniform PassConstants {
  uint count;        // elements this dispatch reads (one window)
  uint in_offset;    // element index of the first one within the input binding
  uint out_offset;   // element index of the first output within the output binding
  uint group_count;  // workgroups of this dispatch (linearized across x, y, z)
  uint flags;        // bit 0: input vectors aligned (in_offset % VEC_N == 0); bit 1: indirect
  uint entry;        // indirect entry of this pass
} pc;

#define PASS_IN_VECTORS 1u
#define PASS_INDIRECT 2u

#if defined(VKPRIM_INDIRECT_BINDING)
#include "common/indirect.glsl"
uint vk_pass_count() { return (pc.flags & PASS_INDIRECT) != 0u ? vk_indirect_count(pc.entry) : pc.count; }
uint vk_pass_groups() { return (pc.flags & PASS_INDIRECT) != 0u ? vk_indirect_groups(pc.entry) : pc.group_count; }
#endif

layout(set = 0, binding = 0, std430) readonly buffer InputValues { VALUE_T in_values[]; };
layout(set = 0, binding = 0, std430) readonly buffer InputVectors { VEC_T in_vectors[]; };
layout(set = 0, binding = 1, std430) writeonly buffer OutputValues { VALUE_T out_values[]; };

// Element i of this window, or the identity past its end.
VALUE_T vk_load_or_identity(uint i) { return i < pc.count ? in_values[pc.in_offset + i] : vk_identity(); }

#endif  // VKPRIM_PASS_IO_GLSL
