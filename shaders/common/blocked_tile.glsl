// Blocked tiles of the scans for user types (VKPRIM_ORDERED): invocation tid owns the ITEMS consecutive
// values from (tile * WG_SIZE + tid) * ITEMS, scans them serially in registers, and one workgroup scan of
// one value per invocation (ROW_N is 1: common/scan_types.glsl) gives each invocation's prefix and the
// tile's aggregate. A user value is up to 16 words, so the row layout of the built-in types (ROW_N
// values per invocation through the workgroup scan) would move ITEMS times as many words through shuffles
// and registers. The owner of a tile and a fallback that recomputes it run this same code, so they get
// the same bits. Striped tiles (each row of a subgroup's values contiguous, loads and stores coalesced, one
// subgroup scan per row) were no faster in the chained scan on an H100 (vec4 sum at 2^26: 1698 against
// 1630 us; 32-byte boxes at 2^24: 1134 against 1225), and NVIDIA's compiler (580) wraps every shuffle
// inside an [[unroll]] loop in convergence checks (MATCH.ANY and an out-of-line call: 2.7x slower there).
// Requires common/config.glsl, common/scan_tile.glsl and common/workgroup_scan.glsl.
// Provides: vk_blocked_first(tile), vk_blocked_scan(tile, scanned, prefix, aggregate) (every invocation
// calls it: barriers), vk_blocked_store(first, k, value), with subgroups vk_blocked_rows_fit() and
// vk_blocked_store_rows(tile, values) (every invocation calls it), and with VKPRIM_BLOCKED_STAGED_STORE
// vk_blocked_store_tile(tile, values) (every invocation calls it).
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

// Stores value k of the invocation (value tid * ITEMS + k of the tile, `first` = vk_blocked_first(tile)).
void vk_blocked_store(uint first, uint k, VALUE_T value) {
  VEC_T v;
  v[0] = value;
  vk_tile_store(first + k, v);
}

#if !defined(VKPRIM_NO_SUBGROUPS)
// Stores the tile's values from blocked registers (values[k] of invocation tid is value tid * ITEMS + k of
// the tile) so that each store instruction of a subgroup writes consecutive values: where ITEMS divides the
// subgroup size S, ITEMS rounds of one shuffle per word transpose the subgroup's run of S x ITEMS values
// to rows (lane c ends with values r * S + c of the run). In round i lane c takes row (i + c) mod ITEMS from
// lane row * S / ITEMS + c / ITEMS, which sends, of its own values, the one that lane wants; so each lane sends
// one value per round and no shared memory is used. Otherwise the values are stored as they are.
// Every invocation of a subgroup calls it. Subgroups are full and hold consecutive invocations (as
// common/workgroup_scan.glsl assumes).
bool vk_blocked_rows_fit() { return ITEMS > 1u && gl_SubgroupSize % ITEMS == 0u; }
void vk_blocked_store_rows(uint tile, VALUE_T values[ITEMS]) {
  const uint lanes = gl_SubgroupSize;
  const uint lane = gl_SubgroupInvocationID;
  if (vk_blocked_rows_fit()) {
    const uint per_row = lanes / ITEMS;  // lanes whose values make up one row
    VALUE_T rows[ITEMS];
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) rows[j] = values[j];
    // Not [[unroll]]: NVIDIA's compiler (580) guards shuffles inside unrolled loops with convergence checks.
    for (uint i = 0u; i < ITEMS; ++i) {
      const uint sent = (lane / per_row + ITEMS - i) % ITEMS;
      VALUE_T send = values[0];
      [[unroll]] for (uint j = 1u; j < ITEMS; ++j) send = vk_pick(sent == j, values[j], send);
      const uint row = (i + lane) % ITEMS;
      const VALUE_T got = vk_shuffle_index(send, row * per_row + lane / ITEMS);
      [[unroll]] for (uint j = 0u; j < ITEMS; ++j) rows[j] = vk_pick(row == j, got, rows[j]);
    }
    const uint run = tile * (WG_SIZE * ITEMS) + (gl_LocalInvocationIndex - lane) * ITEMS;
    [[unroll]] for (uint r = 0u; r < ITEMS; ++r) vk_blocked_store(run + r * lanes + lane, 0u, rows[r]);
  } else {
    const uint first = vk_blocked_first(tile);
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) vk_blocked_store(first, k, values[k]);
  }
}
#endif

#if defined(VKPRIM_BLOCKED_STAGED_STORE)
// Or the whole tile through shared memory, so that consecutive invocations store consecutive values. Stored
// from the blocked registers, a warp's store touches every ITEMS-th value: measured on an H100 (vec4 sum at
// 2^26), reduce_then_scan's rescan ran 1362 us so and 1210 staged (32-byte boxes at 2^24: 1208 and 803),
// but the chained scan, which holds more state per tile through its look-back, slowed from 1632 to 2227
// staged, so it stores directly; loads staged the same way were slower in both (sum4 at 2^26: 1208 to
// 1511 us, 1632 to 2545). The values are staged as words with one pad word per 32, which spreads both the
// blocked writes (ITEMS x words apart) and the coalesced reads (words apart) over the banks.
const uint STAGE_WORDS = WG_SIZE * ITEMS * VKPRIM_USER_WORDS;
shared uint s_stage_words[STAGE_WORDS + STAGE_WORDS / 32u];
uint vk_stage_address(uint word) { return word + word / 32u; }

// Stores out[tile's first value + i] = the tile's i-th value, from values[k] of invocation tid (value
// tid * ITEMS + k of the tile). Every invocation calls it (barriers).
void vk_blocked_store_tile(uint tile, VALUE_T values[ITEMS]) {
  const uint tid = gl_LocalInvocationIndex;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const VALUE_BITS_T b = vk_value_bits(values[k]);
    const uint base = (tid * ITEMS + k) * VKPRIM_USER_WORDS;
    for (uint w = 0u; w < VKPRIM_USER_WORDS; ++w) s_stage_words[vk_stage_address(base + w)] = b[w];
  }
  barrier();
  const uint first = tile * WG_SIZE * ITEMS;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    const uint e = k * WG_SIZE + tid;
    VALUE_BITS_T b;
    for (uint w = 0u; w < VKPRIM_USER_WORDS; ++w) b[w] = s_stage_words[vk_stage_address(e * VKPRIM_USER_WORDS + w)];
    VEC_T v;
    v[0] = vk_bits_value(b);
    vk_tile_store(first + e, v);
  }
}
#endif

#endif  // VKPRIM_BLOCKED_TILE_GLSL
