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
// Requires common/config.glsl, common/scan_tile.glsl and common/workgroup_row_scan.glsl.
// Provides: vk_blocked_first(tile), vk_blocked_scan(tile, scanned, prefix, aggregate) and
// vk_blocked_aggregate(tile) (every invocation calls them: barriers), vk_blocked_store(first, k, value),
// with subgroups vk_blocked_rows_fit() and vk_blocked_store_rows(tile, values) (every invocation calls
// it), and with VKPRIM_BLOCKED_STAGED_STORE vk_blocked_store_tile(tile, values) (every invocation calls it).
#ifndef VKPRIM_BLOCKED_TILE_GLSL
#define VKPRIM_BLOCKED_TILE_GLSL

uint vk_blocked_first(uint tile) { return (tile * WG_SIZE + gl_LocalInvocationIndex) * ITEMS; }

// Stores value k of the invocation (value tid * ITEMS + k of the tile, `first` = vk_blocked_first(tile)).
void vk_blocked_store(uint first, uint k, VALUE_T value) {
  VEC_T v;
  v[0] = value;
  vk_tile_store(first + k, v);
}

#if !defined(VKPRIM_NO_SUBGROUPS)
// Store groups: G consecutive lanes whose values are exchanged so that each store instruction writes G
// consecutive values per group. G is the largest power of two that divides ITEMS, spans at most 128 bytes
// of values (a cache line: wider spans gain nothing and cost a round each), at most 8, and fits the
// subgroup; 1 (no exchange) where ITEMS is above 2 x VK_PAIRS. Subgroups are full and hold consecutive invocations (as
// common/workgroup_scan.glsl assumes).
// The transposition is written out for up to 2 x VK_PAIRS values per invocation, 32 words (the chained
// scan's default tiles hold at most 128 bytes per invocation), so its code stays about the same size
// whatever the size of the value. VK_SWAPS names the round's swaps of VK_PAIRS pairs (defined below).
#if VKPRIM_USER_WORD_COUNT == 1
#define VK_PAIRS 16u
#define VK_SWAPS VK_SWAP16
#elif VKPRIM_USER_WORD_COUNT == 2
#define VK_PAIRS 8u
#define VK_SWAPS VK_SWAP8
#elif VKPRIM_USER_WORD_COUNT <= 4
#define VK_PAIRS 4u
#define VK_SWAPS VK_SWAP4
#elif VKPRIM_USER_WORD_COUNT <= 8
#define VK_PAIRS 2u
#define VK_SWAPS VK_SWAP2
#else
#define VK_PAIRS 1u
#define VK_SWAPS VK_SWAP1
#endif
uint vk_store_group() {
  const uint span = 1u << findMSB(clamp(32u / VKPRIM_USER_WORDS, 1u, 8u));
  return ITEMS > 2u * VK_PAIRS ? 1u : min(min(ITEMS & (~ITEMS + 1u), span), gl_SubgroupSize);
}
// Transposes each G x G block of a group's values in place (lane j's values j * ITEMS + q * G .. + G - 1, for
// each chunk q): a butterfly of log2 G rounds; in the round of bit b, lanes j and j ^ b swap the values whose
// index within the chunk differs from their own position in that bit, one shuffle xor per word and pair.
// Afterwards value q * G + m of lane j is value q * G + j of the group's lane m. Its own inverse.
// Written out, not as loops: NVIDIA's compiler (580) left the loops rolled for a 24-byte value and indexed
// the registers through chains of compares (the affine maps' chained scan, transposed this way on an H100:
// 9.4 ms at 2^26 rolled, 8.5 written out). The indices are specialization-constant expressions (VK_AT), so
// each is a constant once ITEMS is set, and the pairs past ITEMS drop out.
#define VK_AT(i) (ITEMS > (i) ? (i) : 0u)
#define VK_LO(p, b) ((((p) & ~((b) - 1u)) << 1u) | ((p) & ((b) - 1u)))
#define VK_SWAP(p, b)                                                                                  \
  if (ITEMS > (VK_LO(p, b) | (b))) {                                                                   \
    const VALUE_T got_ = vk_shuffle_xor(vk_pick(upper_, values[VK_AT(VK_LO(p, b))], values[VK_AT(VK_LO(p, b) | (b))]), b); \
    values[VK_AT(VK_LO(p, b))] = vk_pick(upper_, got_, values[VK_AT(VK_LO(p, b))]);                   \
    values[VK_AT(VK_LO(p, b) | (b))] = vk_pick(upper_, values[VK_AT(VK_LO(p, b) | (b))], got_);        \
  }
#define VK_SWAP1(b) VK_SWAP(0u, b)
#define VK_SWAP2(b) VK_SWAP1(b) VK_SWAP(1u, b)
#define VK_SWAP4(b) VK_SWAP2(b) VK_SWAP(2u, b) VK_SWAP(3u, b)
#define VK_SWAP8(b) VK_SWAP4(b) VK_SWAP(4u, b) VK_SWAP(5u, b) VK_SWAP(6u, b) VK_SWAP(7u, b)
#define VK_SWAP16(b)                                                                                   \
  VK_SWAP8(b) VK_SWAP(8u, b) VK_SWAP(9u, b) VK_SWAP(10u, b) VK_SWAP(11u, b) VK_SWAP(12u, b)           \
  VK_SWAP(13u, b) VK_SWAP(14u, b) VK_SWAP(15u, b)
#define VK_ROUND(b)                                                                                    \
  if ((b) < group) {                                                                                   \
    const bool upper_ = (gl_SubgroupInvocationID & (b)) != 0u;                                         \
    VK_SWAPS(b)                                                                                        \
  }
// Rounds of bits below G: G is at most 2 x VK_PAIRS and at most 8.
void vk_group_transpose(inout VALUE_T values[ITEMS], uint group) {
  VK_ROUND(1u)
#if VKPRIM_USER_WORD_COUNT <= 8
  VK_ROUND(2u)
#endif
#if VKPRIM_USER_WORD_COUNT <= 4
  VK_ROUND(4u)
#endif
}
#undef VK_ROUND
#undef VK_SWAPS
#undef VK_SWAP16
#undef VK_SWAP8
#undef VK_SWAP4
#undef VK_SWAP2
#undef VK_SWAP1
#undef VK_SWAP
#undef VK_LO
#undef VK_AT

// Rows: where ITEMS is 2 or 4 and divides the subgroup size S, ITEMS rounds of one shuffle per word
// transpose the subgroup's run of S x ITEMS values to rows (lane c ends with values r * S + c of the run), so
// each store instruction writes S consecutive values. In round i lane c takes row (i + c) mod ITEMS from lane
// row * S / ITEMS + c / ITEMS, which sends, of its own values, the one that lane wants.
bool vk_rotate_rows() { return ITEMS > 1u && ITEMS <= 4u && gl_SubgroupSize % ITEMS == 0u; }

// Stores the tile's values from blocked registers (values[k] of invocation tid is value tid * ITEMS + k of
// the tile) so that each store instruction writes runs of consecutive values instead of every ITEMS-th
// value, without shared memory: rows for ITEMS of 2 and 4, else the group transposition (runs of G). The
// rows' rounds pick values by index through selects, ITEMS^2 selects per word, so for 8 values and more
// the butterfly's ITEMS log2 G is the cheaper (and holds fewer registers); for 2 and 4 the rows' longer runs
// stored faster (on an H100, the 32-byte boxes' chained scan and rescan, and the 24-byte affine maps').
// Otherwise (vk_blocked_rows_fit() false) the values are stored as they are. Every invocation of a subgroup
// calls it.
bool vk_blocked_rows_fit() { return vk_rotate_rows() || vk_store_group() > 1u; }
void vk_blocked_store_rows(uint tile, VALUE_T values[ITEMS]) {
  if (vk_rotate_rows()) {
    const uint lanes = gl_SubgroupSize;
    const uint lane = gl_SubgroupInvocationID;
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
    const uint group = vk_store_group();
    const uint j = gl_SubgroupInvocationID & (group - 1u);
    vk_group_transpose(values, group);
    // Value i = q * G + m of lane j is value q * G + j of the group's lane m (G = 1: the values as they are).
    const uint first = vk_blocked_first(tile) - j * ITEMS + j;
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
      const uint m = i & (group - 1u);
      vk_blocked_store(first + m * ITEMS + (i - m), 0u, values[i]);
    }
  }
}
#endif

// scanned: the inclusive scan of the invocation's own values; prefix: the values of the invocations before
// it, combined (the identity for invocation 0); aggregate: the whole tile. Values past the count are the
// identity.
void vk_blocked_scan(uint tile, out VALUE_T scanned[ITEMS], out VALUE_T prefix, out VALUE_T aggregate) {
  const uint first = vk_blocked_first(tile);
#if !defined(VKPRIM_NO_SUBGROUPS)
  // Where vk_blocked_store_rows stores through the group transposition, the loads mirror it: each load
  // instruction reads runs of G consecutive values per group of lanes, and the transposition (its own
  // inverse) leaves each invocation its ITEMS consecutive values.
  const uint group = vk_rotate_rows() ? 1u : vk_store_group();
  if (group > 1u) {
    const uint j = gl_SubgroupInvocationID & (group - 1u);
    const uint base = first - j * ITEMS + j;
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
      const uint m = i & (group - 1u);
      scanned[i] = vk_tile_load(base + m * ITEMS + (i - m))[0];
    }
    vk_group_transpose(scanned, group);
  } else
#endif
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) scanned[k] = vk_tile_load(first + k)[0];
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) scanned[k] = vk_op(scanned[k - 1u], scanned[k]);
  ROW_T total;
  const ROW_T p = vk_workgroup_exclusive_scan(ROW_T(scanned[ITEMS - 1u]), total);
  prefix = p[0];
  aggregate = total[0];
}

// The aggregate vk_blocked_scan gives, with the same bits (each invocation's values folded in the same
// order, then the same workgroup scan), from plain loads folded as they arrive instead of ITEMS values held
// for the scan: the chained scan's fallback runs it while its own tile stays in registers.
VALUE_T vk_blocked_aggregate(uint tile) {
  const uint first = vk_blocked_first(tile);
  VALUE_T folded = vk_tile_load(first)[0];
  [[unroll]] for (uint k = 1u; k < ITEMS; ++k) folded = vk_op(folded, vk_tile_load(first + k)[0]);
  ROW_T total;
  vk_workgroup_exclusive_scan(ROW_T(folded), total);
  return total[0];
}

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
