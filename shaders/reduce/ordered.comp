#version 460
// Reduce level for operators that need not commute (user operators, VKPRIM_ORDERED): each workgroup
// reduces one tile of WG_SIZE x ITEMS values in order and writes its total; levels repeat until one value
// remains, so the result is the left-to-right combination whatever the operator. Invocation tid folds
// the ITEMS consecutive values tid * ITEMS .. of the tile serially, then one ordered workgroup reduction
// (common/workgroup.glsl) combines the invocations in order: one value of the user type per invocation
// crosses the workgroup, however many the tile holds. Values past the count load as the identity.
// Recorded indirectly (record_indirect), the count and group count come from the GPU-computed entry
// pc.entry.
// Defines: VKPRIM_TYPE_USER, VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS.
// Bindings: common/pass_io.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 2
#include "common/config.glsl"
#include "common/pass_io.glsl"
#include "common/workgroup.glsl"

void main() {
  const uint group = vk_workgroup_index();
  if (group >= vk_pass_groups()) return;
  const uint count = vk_pass_count();
  const uint first = (group * WG_SIZE + gl_LocalInvocationIndex) * ITEMS;
  VALUE_T loaded[ITEMS];
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    loaded[k] = vk_identity();
    if (first + k < count) loaded[k] = in_values[pc.in_offset + first + k];  // not ?: (common/scan_tile.glsl)
  }
  VALUE_T acc = loaded[0];
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) acc = vk_op(acc, loaded[k]);
  const VALUE_T total = vk_workgroup_reduce(acc);
  if (gl_LocalInvocationIndex == 0u) out_values[pc.out_offset + group] = total;
}
