#version 460
// reduce_then_scan pass 1 (Merrill & Garland 2016, "Single-pass parallel prefix scan with decoupled
// look-back", for the reduce-then-scan background): reduce each tile of WG_SIZE * ITEMS 16-byte vectors
// (common/scan_tile.glsl) to one value, aux[group] = tile total. ITEMS loads in flight per invocation,
// then subgroup reduce and shared memory across subgroups (common/workgroup.glsl); user operators, which
// need not commute, fold consecutive values per invocation and reduce the workgroup in order.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS.
// Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 4  // the record_indirect region (SCAN_INDIRECT)
#include "common/config.glsl"
#include "common/scan_io.glsl"
#include "common/scan_tile.glsl"
#include "common/workgroup.glsl"

void main() {
  vk_scan_begin();
  const uint group = vk_workgroup_index();
  if (group >= vk_scan_group_count) return;
#if defined(VKPRIM_ORDERED)
  // Any in-order reduction of the tile gives its total: invocation tid folds the ITEMS consecutive values
  // from tid * ITEMS serially, then one ordered workgroup reduction.
  const uint first = (group * WG_SIZE + gl_LocalInvocationIndex) * ITEMS;
  VEC_T loaded[ITEMS];
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) loaded[k] = vk_tile_load(first + k);
  VALUE_T acc = loaded[0][0];
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) acc = vk_op(acc, loaded[k][0]);
  const VALUE_T total = vk_workgroup_reduce(acc);
#else
  const uint first = vk_tile_first_vector(group);
  VEC_T loaded[ITEMS];
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) loaded[k] = vk_tile_load(first + k * WG_SIZE);
  VALUE_T acc = vk_vec_reduce(loaded[0]);
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) acc = vk_op(acc, vk_vec_reduce(loaded[k]));
  const VALUE_T total = vk_workgroup_reduce(acc);
#endif
  if (gl_LocalInvocationIndex == 0u) aux_values[pc.aux_offset + group] = total;
}
