// Blocked tiles of the scans for user types (VKPRIM_ORDERED): invocation tid owns the ITEMS consecutive
// values from (tile * WG_SIZE + tid) * ITEMS, scans them serially in registers, and one workgroup scan of
// one value per invocation (ROW_N is 1: common/scan_types.glsl) gives each invocation's prefix and the
// tile's aggregate. A user value is up to 16 words, so the row layout of the built-in types (ROW_N
// values per invocation through the workgroup scan) would move ITEMS times as many words through shuffles
// and registers. The owner of a tile and a fallback that recomputes it run this same code, so they get
// the same bits.
// Requires common/config.glsl, common/scan_tile.glsl and common/workgroup_scan.glsl.
// Provides: vk_blocked_first(tile), vk_blocked_scan(tile, scanned, prefix, aggregate) (every invocation
// calls it: barriers), vk_blocked_store(first, k, value).
#ifndef VKPRIM_BLOCKED_TILE_GLSL
#define VKPRIM_BLOCKED_TILE_GLSL

uint vk_blocked_first(uint tile) { return (tile * WG_SIZE + gl_LocalInvocationIndex) * ITEMS; }

// scanned: the inclusive scan of the invocation's own values; prefix: the values of the invocations before
// it, combined (the identity for invocation 0); aggregate: the whole tile. Values past the count are the
// identity.
void vk_blocked_scan(uint tile, out VALUE_T scanned[ITEMS], out VALUE_T prefix, out VALUE_T aggregate) {
  const uint first = vk_blocked_first(tile);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_tile_load(first + k)[0];
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) scanned[k] = vk_op(scanned[k - 1u], scanned[k]);
  ROW_T total;
  const ROW_T p = vk_workgroup_exclusive_scan(ROW_T(scanned[ITEMS - 1u]), total);
  prefix = p[0];
  aggregate = total[0];
}

void vk_blocked_store(uint first, uint k, VALUE_T value) {
  VEC_T v;
  v[0] = value;
  vk_tile_store(first + k, v);
}

#endif  // VKPRIM_BLOCKED_TILE_GLSL
