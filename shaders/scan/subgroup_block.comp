#version 460
// Scan level, blocked with subgroup scans: one block of WG_SIZE * ITEMS elements (ITEMS <= 4 rows; row k
// holds elements k * WG_SIZE + tid, so loads are coalesced). Each invocation puts its ITEMS values in one
// ROW_T; a single workgroup scan of those vectors (subgroup inclusive/exclusive scans, subgroup totals
// through shared memory: common/workgroup_row_scan.glsl) scans all rows at once, and the rows are chained.
// Writes the block's scan, the block total to aux[group] (SCAN_WRITE_SUMS) or, for the top level, starts
// from the window carry-in and writes the carry-out. Also the tile-sum scan of reduce_then_scan.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS (1..4).
// Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 4  // the record_indirect region (SCAN_INDIRECT)
#include "common/config.glsl"
#include "common/scan_io.glsl"
#include "common/workgroup_row_scan.glsl"

void main() {
  vk_scan_begin();
  const uint group = vk_workgroup_index();
  if (group >= vk_scan_group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint base = group * (WG_SIZE * ITEMS);
  ROW_T x = vk_row_identity();
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint i = base + k * WG_SIZE + tid;
    if (i < vk_scan_elements) x[k] = in_values[pc.in_offset + i];
  }
  ROW_T totals;
  const ROW_T prefix = vk_workgroup_exclusive_scan(x, totals);
  const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
  const bool has_carry = vk_scan_has_carry_in();
  const VALUE_T carry = vk_scan_carry_in(group);
  VALUE_T block_total = vk_identity();
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint i = base + k * WG_SIZE + tid;
    const VALUE_T local_prefix = k == 0u ? prefix[k] : vk_op(block_total, prefix[k]);
    const VALUE_T y = exclusive ? local_prefix : vk_op(local_prefix, x[k]);
    if (i < vk_scan_elements) out_values[pc.out_offset + i] = vk_scan_add_carry(has_carry, carry, y);
    block_total = k == 0u ? totals[k] : vk_op(block_total, totals[k]);
  }
  if (tid == 0u) {
    if (vk_scan_flag(SCAN_WRITE_SUMS)) aux_values[pc.aux_offset + group] = block_total;
    if (vk_scan_flag(SCAN_CARRY_OUT_SLOT)) vk_scan_write_carry_out(vk_op(carry, block_total));
  }
}
