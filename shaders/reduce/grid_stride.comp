#version 460
// Reduce level, grid-stride: each thread combines ITEMS 16-byte vectors per step (independent loads in
// flight), striding over the window by the whole grid; then subgroup reduce and shared memory across
// subgroups. The grid is sized to the device, so a level leaves at most a few thousand partials.
// Recorded indirectly (record_indirect), the count and grid come from the GPU-computed entry pc.entry.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 2
#include "common/config.glsl"
#include "common/pass_io.glsl"
#include "common/workgroup.glsl"

void main() {
  const uint group = vk_workgroup_index();
  const uint group_count = vk_pass_groups();
  if (group >= group_count) return;
  const uint count = vk_pass_count();
  const uint tid = gl_LocalInvocationIndex;
  VALUE_T acc = vk_identity();
  if ((pc.flags & PASS_IN_VECTORS) != 0u) {
    const uint vector_count = count / VEC_N;
    const uint first_vector = pc.in_offset / VEC_N;
    const uint tile = WG_SIZE * ITEMS;
    const uint grid_stride = group_count * tile;
    uint v = group * tile + tid;
    // Full tiles: ITEMS loads issued before any is combined.
    for (; v + (ITEMS - 1u) * WG_SIZE < vector_count; v += grid_stride) {
      VEC_T loaded[ITEMS];
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) loaded[k] = in_vectors[first_vector + v + k * WG_SIZE];
      [[unroll]] for (uint k = 0u; k < ITEMS; ++k) acc = vk_op(acc, vk_vec_reduce(loaded[k]));
    }
    // The partial tile this thread still owns.
    for (; v < vector_count; v += WG_SIZE) acc = vk_op(acc, vk_vec_reduce(in_vectors[first_vector + v]));
    // Scalar tail past the last whole vector.
    const uint tail = vector_count * VEC_N + group * WG_SIZE + tid;
    if (tail < count) acc = vk_op(acc, in_values[pc.in_offset + tail]);
  } else {
    for (uint i = group * WG_SIZE + tid; i < count; i += group_count * WG_SIZE)
      acc = vk_op(acc, in_values[pc.in_offset + i]);
  }
  const VALUE_T total = vk_workgroup_reduce(acc);
  if (tid == 0u) out_values[pc.out_offset + group] = total;
}
