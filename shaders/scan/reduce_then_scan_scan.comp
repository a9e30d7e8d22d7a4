#version 460
// reduce_then_scan pass 3: rescan each tile from the input with its carry-in and write the output.
// Each invocation scans its ITEMS vectors serially in registers; one workgroup exclusive scan of the
// ROW_T of vector totals per four rows (one component per row: common/workgroup_row_scan.glsl) gives every
// vector's prefix within its row and the row totals, the rows are chained, and the carry-in is added: aux[group]
// (SCAN_CARRY_FROM_AUX, the exclusive scan of the tile totals, window carry included) or, for a window of
// one tile, carry slot P, then the carry-out is written (SCAN_CARRY_OUT_SLOT). With SCAN_CARRY_TWO_LEVEL
// the carry is the tile's block-local prefix op its block's carry (the tile-sum scan skips its add-back).
// Workgroups take the tiles in reverse order, so the first tiles rescanned are the last ones pass 1 read
// (still in L2 on large GPUs). Each workgroup reads its whole tile before writing it: in place is safe.
// User types (VKPRIM_ORDERED) rescan a blocked tile instead (common/blocked_tile.glsl), the same tiles.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant), VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE (power of two), ITEMS (>= 1).
// Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_INDIRECT_BINDING 4  // the record_indirect region (SCAN_INDIRECT)
#include "common/config.glsl"
#include "common/scan_io.glsl"
#include "common/scan_tile.glsl"
#include "common/workgroup_row_scan.glsl"
#if defined(VKPRIM_ORDERED)
#define VKPRIM_BLOCKED_STAGED_STORE 1
#include "common/blocked_tile.glsl"
#endif

void main() {
  vk_scan_begin();
  const uint group = vk_workgroup_index();
  if (group >= vk_scan_group_count) return;
  const uint tile = vk_scan_group_count - 1u - group;
#if defined(VKPRIM_ORDERED)
  // User types: a blocked tile (common/blocked_tile.glsl), the carry-in before the invocation's prefix.
  VALUE_T scanned[ITEMS], prefix, total;
  vk_blocked_scan(tile, scanned, prefix, total);
  const bool has_carry = vk_scan_has_carry_in();
  const VALUE_T carry = vk_scan_carry_in(tile);
#if !defined(VKPRIM_NO_SUBGROUPS)
  // Selects, not branches, ahead of the shuffles of the store (common/subgroup.glsl, vk_pick).
  const VALUE_T p = vk_pick(has_carry, vk_op(carry, prefix), prefix);
  const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
  [[unroll]] for (uint k = ITEMS - 1u; k >= 1u; --k)
    scanned[k] = vk_op(p, vk_pick(exclusive, scanned[k - 1u], scanned[k]));
  scanned[0] = vk_pick(exclusive, p, vk_op(p, scanned[0]));
  // Transposed through shuffles where the rows fit the subgroup, else staged in shared memory (both store
  // consecutive values per instruction).
  if (vk_blocked_rows_fit()) vk_blocked_store_rows(tile, scanned);
  else vk_blocked_store_tile(tile, scanned);
#else
  const VALUE_T p = has_carry ? vk_op(carry, prefix) : prefix;
  if (vk_scan_flag(SCAN_EXCLUSIVE)) {
    [[unroll]] for (uint k = ITEMS - 1u; k >= 1u; --k) scanned[k] = vk_op(p, scanned[k - 1u]);
    scanned[0] = p;
  } else {
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_op(p, scanned[k]);
  }
  vk_blocked_store_tile(tile, scanned);
#endif
  if (gl_LocalInvocationIndex == 0u && vk_scan_flag(SCAN_CARRY_OUT_SLOT))
    vk_scan_write_carry_out(has_carry ? vk_op(carry, total) : total);
#else
  const uint first = vk_tile_first_vector(tile);
  VEC_T scanned[ITEMS];
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_tile_load(first + k * WG_SIZE);
  // Inclusive scan of each vector in registers; its last value is the vector's total.
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
    [[unroll]] for (uint c = 1u; c < VEC_N; ++c) scanned[k][c] = vk_op(scanned[k][c - 1u], scanned[k][c]);
  const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
  bool has_run = vk_scan_has_carry_in();
  VALUE_T run = vk_scan_carry_in(tile);  // carry-in op the totals of the rows before row k
  // Rows in groups of four: one workgroup scan per group.
  [[unroll]] for (uint g = 0u; g < ITEMS; g += ROW_N) {
    ROW_T totals = vk_row_identity();
    [[unroll]] for (uint j = 0u; j < ROW_N; ++j)
      if (g + j < ITEMS) totals[j] = scanned[g + j][VEC_N - 1u];
    ROW_T row_totals;
    const ROW_T prefix = vk_workgroup_exclusive_scan(totals, row_totals);
    [[unroll]] for (uint j = 0u; j < ROW_N; ++j) {
      const uint k = g + j;
      if (k >= ITEMS) break;
      const VALUE_T p = has_run ? vk_op(run, prefix[j]) : prefix[j];
      VEC_T y;
      if (exclusive) {
        y[0] = p;
        [[unroll]] for (uint c = 1u; c < VEC_N; ++c) y[c] = vk_op(p, scanned[k][c - 1u]);
      } else {
        [[unroll]] for (uint c = 0u; c < VEC_N; ++c) y[c] = vk_op(p, scanned[k][c]);
      }
      vk_tile_store(first + k * WG_SIZE, y);
      run = has_run ? vk_op(run, row_totals[j]) : row_totals[j];
      has_run = true;
    }
  }
  if (gl_LocalInvocationIndex == 0u && vk_scan_flag(SCAN_CARRY_OUT_SLOT)) vk_scan_write_carry_out(run);
#endif
}
