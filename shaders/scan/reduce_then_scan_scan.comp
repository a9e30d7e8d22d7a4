#version 460
// reduce_then_scan pass 3: rescan each tile from the input with its carry-in and write the output.
// Each invocation scans its ITEMS (<= 4) vectors serially in registers, one workgroup exclusive scan of
// the ROW_T of vector totals (one component per row: common/workgroup_scan.glsl) gives every vector's
// prefix within its row and the row totals, the rows are chained, and the carry-in is added: aux[group]
// (SCAN_CARRY_FROM_AUX, the exclusive scan of the tile totals, window carry included) or, for a window of
// one tile, carry slot P, then the carry-out is written (SCAN_CARRY_OUT_SLOT). Each workgroup reads its
// whole tile before writing it, so in place is safe.
// Defines: VKPRIM_TYPE_*, VKPRIM_OP_*, VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS (1..4).
// Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/scan_io.glsl"
#include "common/scan_tile.glsl"
#include "common/workgroup_scan.glsl"

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint first = vk_tile_first_vector(group);
  VEC_T scanned[ITEMS];
  ROW_T totals = vk_row_identity();
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_tile_load(first + k * WG_SIZE);
  // Inclusive scan of each vector in registers; its last value is the vector's total.
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    [[unroll]] for (uint c = 1u; c < VEC_N; ++c) scanned[k][c] = vk_op(scanned[k][c - 1u], scanned[k][c]);
    totals[k] = scanned[k][VEC_N - 1u];
  }
  ROW_T row_totals;
  const ROW_T prefix = vk_workgroup_exclusive_scan(totals, row_totals);
  const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
  const bool has_carry = vk_scan_has_carry_in();
  VALUE_T run = vk_scan_carry_in(group);  // carry-in op the totals of the rows before row k
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const VALUE_T p = (k == 0u && !has_carry) ? prefix[k] : vk_op(run, prefix[k]);
    VEC_T y;
    if (exclusive) {
      y[0] = p;
      [[unroll]] for (uint c = 1u; c < VEC_N; ++c) y[c] = vk_op(p, scanned[k][c - 1u]);
    } else {
      [[unroll]] for (uint c = 0u; c < VEC_N; ++c) y[c] = vk_op(p, scanned[k][c]);
    }
    vk_tile_store(first + k * WG_SIZE, y);
    run = (k == 0u && !has_carry) ? row_totals[k] : vk_op(run, row_totals[k]);
  }
  if (gl_LocalInvocationIndex == 0u && vk_scan_flag(SCAN_CARRY_OUT_SLOT)) vk_scan_write_carry_out(run);
}
