// Radix sort building blocks shared by shaders/sort/*.comp: bindings and push constants, the
// order-preserving key transform, digit extraction, warp-striped tile loads, the stable in-tile rank
// (subgroup-ballot multisplit, or a shared-memory emulation over "virtual subgroups" of 16 invocations),
// the 256-digit workgroup scan and the scatter of a ranked tile through shared memory.
//
// Defines: VKPRIM_KEY64 (keys are two u32 words), VKPRIM_KEY8 / VKPRIM_KEY16 (u8 / u16 keys in the
// buffers), VKPRIM_VALUE_WORDS (0 keys only, 1 or 2 words of payload), VKPRIM_VALUE_UNIT (wide values:
// VALUE_UNITS units of 1 or 4 words), VKPRIM_NO_SUBGROUPS (the emulation), VKPRIM_PARTITIONED (rank with
// subgroupPartitionNV instead of eight ballots per key; VK_NV_shader_subgroup_partitioned),
// VKPRIM_DIRECT_SCATTER (keys and values written from registers, not staged in shared memory).
// Specialization: WG_SIZE (>= 256, a multiple of the subgroup size), ITEMS (keys per invocation per tile; a
// tile is TILE = WG_SIZE * ITEMS keys), SUBGROUP_MIN (constant 7: the smallest subgroup size the pipeline may
// run with; sizes the per-subgroup shared arrays), KEY_FLAGS (constant 3: the key transform, SORT_SIGNED |
// SORT_FLOAT | SORT_DESCENDING; every kernel that reads or writes keys; plus SORT_HIST_PARTIALS),
// STAGE_ROUNDS (constant 4, ranking kernels: the tile is staged for its scatter in 1 or 2 rounds),
// VALUE_UNITS (constant 6, wide values: units per value). Set by the including kernel: SORT_RANKING (the rank
// and scatter below), SORT_RANK_FEW_REGISTERS (the ranking loops recompute digits and rank items one after
// another: see sort_rank_bit), SORT_MEMORY_MODEL (scoped shared atomics), SORT_PASS_BIT / SORT_PASS_MASK (the
// pass being ranked, default pc.bit / pc.digit_mask) and SORT_RANK_ROWS_BELOW (rows from there on hold only
// padding and are not ranked) for a kernel that runs every pass itself (sort/single.comp).
// Bindings (set 0): 0 keys in, 1 keys out, 2 values in, 3 values out, 4 meta (histograms, digit table,
// tile state: see src/sort.cpp), 5 the record_indirect region (common/indirect.glsl).
// Passes that only count digits read raw keys and transform them; the ranking kernels hold and stage the
// transformed ("ordered") key, so digits come from it directly, and transform it back when storing.
#ifndef VKPRIM_RADIX_GLSL
#define VKPRIM_RADIX_GLSL

#include "common/config.glsl"

#if !defined(VKPRIM_NO_SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#if defined(VKPRIM_PARTITIONED)
#extension GL_NV_shader_subgroup_partitioned : require
#endif
#define RADIX_SG_SIZE gl_SubgroupSize
#define RADIX_SG_ID gl_SubgroupID
#define RADIX_SG_LANE gl_SubgroupInvocationID
// Shared arrays are sized for the smallest subgroup the pipeline may run with (specialization constant 7,
// set by the runtime: the pinned size, else the device's minimum; 8 at the least).
layout(constant_id = 7) const uint SUBGROUP_MIN = 8u;
#define RADIX_MIN_SG SUBGROUP_MIN
#else
// Emulation: fixed groups of 16 invocations play the subgroups (ballots become shared-memory reads).
#define RADIX_SG_SIZE 16u
#define RADIX_SG_ID (gl_LocalInvocationIndex / 16u)
#define RADIX_SG_LANE (gl_LocalInvocationIndex % 16u)
#define RADIX_MIN_SG 16u
#endif

// Shared-memory atomics: workgroup-scoped where the kernel runs under the Vulkan memory model (onesweep
// defines SORT_MEMORY_MODEL; there an unscoped atomic would be device scope), plain GLSL ones elsewhere.
#if defined(SORT_MEMORY_MODEL)
#extension GL_KHR_memory_scope_semantics : require
#define SHARED_ATOMIC_ADD(x, v) atomicAdd(x, v, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed)
#else
#define SHARED_ATOMIC_ADD(x, v) atomicAdd(x, v)
#endif

#define RADIX_DIGITS 256u

#if defined(VKPRIM_KEY64)
#define KEY_T uvec2
#define KEY_WORDS 2u
#else
#define KEY_T uint
#define KEY_WORDS 1u
#endif
#if !defined(VKPRIM_VALUE_WORDS)
#define VKPRIM_VALUE_WORDS 0
#endif
#if VKPRIM_VALUE_WORDS == 2
#define VAL_T uvec2
#elif !defined(VKPRIM_VALUE_UNIT)
#define VAL_T uint
#endif

// Keys of 8 or 16 bits (VKPRIM_KEY8, VKPRIM_KEY16) are held as uint in registers and shared memory; only
// the buffers hold the narrow type (8- and 16-bit storage). Unsigned only, so the order transform reduces
// to descending's inversion, whose bits above the key's width are dropped by the narrowing store.
#if defined(VKPRIM_KEY8)
#extension GL_EXT_shader_8bit_storage : require
#define KEY_STORE_T uint8_t
#elif defined(VKPRIM_KEY16)
#extension GL_EXT_shader_16bit_storage : require
#define KEY_STORE_T uint16_t
#endif
#if defined(KEY_STORE_T)
#define SORT_KEY_IN(i) uint(keys_in[i])
#define SORT_KEY_OUT(i, k) keys_out[i] = KEY_STORE_T(k)
#else
#define KEY_STORE_T KEY_T
#define SORT_KEY_IN(i) keys_in[i]
#define SORT_KEY_OUT(i, k) keys_out[i] = (k)
#endif

// Wide values (VKPRIM_VALUE_UNIT: 12 to 64 bytes, any multiple of 4): a value is VALUE_UNITS units of
// VKPRIM_VALUE_UNIT words (4: uvec4, for sizes that are multiples of 16; else 1), moved as bits.
// VALUE_UNITS is specialization constant 6, so one kernel serves every size of a unit.
#if defined(VKPRIM_VALUE_UNIT)
#define SORT_WIDE_VALUES 1
#if VKPRIM_VALUE_UNIT == 4
#define VAL_T uvec4
#else
#define VAL_T uint
#endif
layout(constant_id = 6) const uint VALUE_UNITS = 3u;
const uint VALUE_WORDS_WIDE = VALUE_UNITS * uint(VKPRIM_VALUE_UNIT);
#endif
#if VKPRIM_VALUE_WORDS > 0 || defined(SORT_WIDE_VALUES)
#define SORT_VALUES 1
#endif

// A kernel of another plan built on these blocks (shaders/segmented_sort) appends its own push-constant
// members by defining SORT_EXTRA_CONSTANTS (member declarations) before including this file.
#if !defined(SORT_EXTRA_CONSTANTS)
#define SORT_EXTRA_CONSTANTS
#endif
layout(push_constant) uniform SortConstants {
  uint count;         // keys (direct records; indirect ones read it from the region)
  uint group_count;   // workgroups with work (direct records)
  uint shifts;        // element shifts within bindings 0..3, 8 bits each: keys in, keys out, values in, values out
  uint bit;           // first key bit of this pass's digit (histogram: begin_bit)
  uint end_bit;       // one past the last key bit sorted on
  uint flags;         // SORT_INDIRECT | pass index << 8 | digit passes << 16 | indirect entry << 24
  uint param;         // kernel-specific: onesweep spin limit
  uint param2;        // kernel-specific: onesweep forced-skip period
  uint hist_partials; // onesweep: word offset in meta of per-workgroup histograms (0: one histogram, META_HIST)
  uint groups_entry;  // indirect entry whose workgroup count is the digit table's width (reduce_then_scan)
  uint digit_mask;    // (1 << digit width at `bit`) - 1: a push constant, so NVIDIA's code reads it as an operand
  uint hist_groups;   // onesweep's first digit pass with hist_partials: histograms to sum | digit passes << 16
  SORT_EXTRA_CONSTANTS
} pc;

// Key transform bits: specialization constant KEY_FLAGS (3), fixed per plan, so the driver folds the
// transform into nothing for unsigned ascending keys (as push-constant bits they cost NVIDIA's code ~30
// instructions per key: selects under runtime flags).
#define SORT_SIGNED 1u
#define SORT_FLOAT 2u
#define SORT_DESCENDING 4u
// Not a key transform: the onesweep kernels of tiles up to 2048 keys may take per-workgroup histograms
// (hist_partials); larger tiles' kernels are built without the code (src/sort.cpp, kHistPartials).
#define SORT_HIST_PARTIALS 16u
layout(constant_id = 3) const uint KEY_FLAGS = 0u;
// pc.flags bits.
#define SORT_INDIRECT 8u

layout(set = 0, binding = 0, std430) readonly buffer KeysIn { KEY_STORE_T keys_in[]; };
layout(set = 0, binding = 1, std430) writeonly buffer KeysOut { KEY_STORE_T keys_out[]; };
#if defined(SORT_VALUES)
layout(set = 0, binding = 2, std430) readonly buffer ValuesIn { VAL_T values_in[]; };
layout(set = 0, binding = 3, std430) writeonly buffer ValuesOut { VAL_T values_out[]; };
#endif
layout(set = 0, binding = 4, std430) buffer Meta { uint meta[]; };
#define VKPRIM_INDIRECT_BINDING 5
#include "common/indirect.glsl"

// Meta layout (words): header, then the per-pass digit histograms (onesweep), then the kernel's region.
#define META_HEADER_WORDS 16u
#define META_TICKET 0u        // 0..7: tile ticket of each onesweep pass
#define META_STAT_TILES 8u
#define META_STAT_FALLBACKS 9u
#define META_STAT_STEPS 10u
#define META_STAT_DEPTH 11u
#define META_HIST META_HEADER_WORDS            // 8 passes x 256 digit counts
// Or, where pc.hist_partials is set (small direct records, src/sort.cpp), each upfront-histogram workgroup g
// stores its own counts at meta[hist_partials + (pass * groups + g) * 256 + digit], so nothing needs a clear.
#define META_REGION (META_HEADER_WORDS + 8u * RADIX_DIGITS)
// A tile-state word the first onesweep digit pass reads as not yet written (even passes store complements,
// see sort/onesweep.comp); the upfront histogram fills the state with it.
#define SORT_STATE_UNWRITTEN 0xFFFFFFFFu

const uint TILE = WG_SIZE * ITEMS;

uint sort_pass_index() { return (pc.flags >> 8u) & 0xFFu; }
uint sort_passes() { return (pc.flags >> 16u) & 0xFFu; }
bool sort_indirect() { return (pc.flags & SORT_INDIRECT) != 0u; }
uint sort_count() { return sort_indirect() ? vk_indirect_count(pc.flags >> 24u) : pc.count; }
uint sort_groups() { return sort_indirect() ? vk_indirect_groups(pc.flags >> 24u) : pc.group_count; }
uint sort_shift(uint binding) { return (pc.shifts >> (8u * binding)) & 0xFFu; }
uint sort_tiles(uint n) { return n / TILE + (n % TILE != 0u ? 1u : 0u); }

// The sum over the per-workgroup histograms of pass `pass` of `digit` (pc.hist_groups & 0xFFFF of them).
uint sort_partials_total(uint pass, uint digit) {
  const uint groups = pc.hist_groups & 0xFFFFu;
  const uint first = pc.hist_partials + pass * groups * RADIX_DIGITS + digit;
  uint total = 0u, g = 0u;
  for (; g + 8u <= groups; g += 8u) {  // eight loads in flight per trip
    uint v[8];
    [[unroll]] for (uint j = 0u; j < 8u; ++j) v[j] = meta[first + (g + j) * RADIX_DIGITS];
    total += ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
  }
  for (; g < groups; ++g) total += meta[first + g * RADIX_DIGITS];
  return total;
}

// This digit pass's count of `digit` over the whole input: the upfront histogram, or, in the first pass
// where the histogram is kept per workgroup, their sum (whose totals the first pass also stores for the
// later passes: sort_store_totals).
uint sort_digit_total(uint pass, uint digit) {
  if ((KEY_FLAGS & SORT_HIST_PARTIALS) != 0u && pc.hist_partials != 0u) return sort_partials_total(pass, digit);
  return meta[META_HIST + pass * RADIX_DIGITS + digit];
}

// The first digit pass, with per-workgroup histograms: tile t, once it has scattered, stores the totals of
// the later passes p with (p - 1) % tiles == t into META_HIST, where those passes read them with one load.
// Spread over tiles and done last, the sums wait on no look-back: with all of them in tile 0 the first pass
// of 2^16 keys took 17.6 us instead of 8.5 on an H100, spread 8.5 against 8.3 with a cleared histogram.
void sort_store_totals(uint tile, uint tiles, uint digit) {
  if ((KEY_FLAGS & SORT_HIST_PARTIALS) == 0u || pc.hist_partials == 0u) return;
  const uint passes = pc.hist_groups >> 16u;
  for (uint p = 1u + tile; p < passes; p += tiles)
    meta[META_HIST + p * RADIX_DIGITS + digit] = sort_partials_total(p, digit);
}

// The high word of a key (the sign bit's word).
uint sort_high_word(KEY_T k) {
#if defined(VKPRIM_KEY64)
  return k.y;
#else
  return k;
#endif
}

// XORs k with the order-preserving transform's mask for a key whose float sign is `negative`: signed keys
// flip the sign bit, floats every bit when negative and only the sign otherwise, descending inverts. The
// mask is its own inverse, so the same function maps back once the sign is known.
// (A branch-free form, uniform masks and a sign-extended select, needed 52 registers at 384 x 13 instead
// of 54 but sorted u32 keys 15% slower at 2^26 and 30% slower at 384 x 16 on the H100.)
KEY_T sort_flip(KEY_T k, bool negative) {
  uint flip_hi = 0u, flip_lo = 0u;
  if ((KEY_FLAGS & SORT_FLOAT) != 0u) {
    flip_hi = negative ? 0xFFFFFFFFu : 0x80000000u;
    flip_lo = negative ? 0xFFFFFFFFu : 0u;
  } else if ((KEY_FLAGS & SORT_SIGNED) != 0u) {
    flip_hi = 0x80000000u;
  }
  if ((KEY_FLAGS & SORT_DESCENDING) != 0u) {
    flip_hi = ~flip_hi;
    flip_lo = ~flip_lo;
  }
#if defined(VKPRIM_KEY64)
  return k ^ uvec2(flip_lo, flip_hi);
#else
  return k ^ flip_hi;
#endif
}

// Order-preserving transform: unsigned as is, signed with the sign bit flipped, floats with every bit
// flipped when the sign is set and only the sign otherwise; descending inverts the result.
KEY_T sort_ordered(KEY_T k) { return sort_flip(k, (sort_high_word(k) >> 31u) != 0u); }

// The inverse of sort_ordered. A float key's sign is read from the ordered key: with descending undone, an
// ordered key with the top bit clear came from a negative float.
KEY_T sort_unordered(KEY_T o) {
  const uint hi = (KEY_FLAGS & SORT_DESCENDING) != 0u ? ~sort_high_word(o) : sort_high_word(o);
  return sort_flip(o, (hi >> 31u) == 0u);
}

// The mask of the digit at `bit`: up to 8 bits, fewer for the last pass before end_bit.
uint sort_digit_mask(uint bit) { return (1u << min(8u, pc.end_bit - bit)) - 1u; }

// The digit pass that ranking and scatter work on: this dispatch's (pc.bit, pc.digit_mask), or the current
// pass of a kernel that runs every pass itself (sort/single.comp defines both).
#if !defined(SORT_PASS_BIT)
#define SORT_PASS_BIT pc.bit
#define SORT_PASS_MASK pc.digit_mask
#endif

// The digit of an ordered key at `bit` under `mask`. This pass's mask is a push constant (pc.digit_mask):
// computed in the shader, NVIDIA's code rebuilds it from pc.end_bit at every key of the scatter (4
// instructions each); as an operand, onesweep's digit passes measured 465-469 us against 476-480 at 2^26
// u32 keys (H100).
uint sort_digit(KEY_T ordered, uint bit, uint mask) {
#if defined(VKPRIM_KEY64)
  if (bit >= 32u) return (ordered.y >> (bit - 32u)) & mask;
  const uint low = ordered.x >> bit;
  return (bit == 0u ? low : (low | (ordered.y << (32u - bit)))) & mask;
#else
  return (ordered >> bit) & mask;
#endif
}

// This pass's digit of an ordered key.
uint sort_pass_digit(KEY_T ordered) { return sort_digit(ordered, SORT_PASS_BIT, SORT_PASS_MASK); }

// The padding key: every bit set once ordered, so its digit is the largest of every pass.
#if defined(VKPRIM_KEY64)
#define SORT_PAD_KEY uvec2(0xFFFFFFFFu)
#else
#define SORT_PAD_KEY 0xFFFFFFFFu
#endif

// Loads keys_in[first + offset + i * stride] (i < ITEMS), ordered, into `keys`; those at or past n become
// the padding key. offset + i * stride must stay below TILE. A tile wholly below n loads without per-key
// bounds tests (a uniform branch), from one base index: NVIDIA's code spends 2 instructions per key there
// instead of ~10 (indices, tests, padding). Onesweep's digit passes: 465-469 -> 464-467 us at 2^26 keys
// (the loads wait on memory, not on issue); the histogram needs the loads batched (histogram.comp).
void sort_load_ordered(uint first, uint offset, uint stride, uint n, out KEY_T keys[ITEMS]) {
  const uint base = sort_shift(0u) + first + offset;
  if (first + TILE <= n) {
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) keys[i] = sort_ordered(SORT_KEY_IN(base + i * stride));
  } else {
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
      keys[i] = first + offset + i * stride < n ? sort_ordered(SORT_KEY_IN(base + i * stride)) : SORT_PAD_KEY;
  }
}

// Padding keys that sort_load_ordered adds to the tile of keys from `first` (nonzero only in the last tile).
uint sort_range_padding(uint first, uint n) { return n - first >= TILE ? 0u : TILE - (n - first); }
uint sort_tile_padding(uint tile, uint n) { return sort_range_padding(tile * TILE, n); }

#if defined(SORT_DIGIT_COUNTS)
shared uint s_hist[RADIX_DIGITS];
// Adds this pass's digits of the tile of keys [first, min(first + TILE, n)) to s_hist (shared atomics; the
// caller clears s_hist and places the barriers) and returns the padding keys it counted as the largest digit.
// All of a tile's loads issue before its atomics (sort_load_ordered), as in histogram.comp: 137-153 -> 101-114
// us per reduce_then_scan upsweep pass at 2^26 u32 keys (H100).
uint sort_count_digits(uint first, uint n) {
  KEY_T keys[ITEMS];
  sort_load_ordered(first, gl_LocalInvocationIndex, WG_SIZE, n, keys);
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) atomicAdd(s_hist[sort_pass_digit(keys[k])], 1u);
  return sort_range_padding(first, n);
}
#endif

// Warp-striped tile layout: subgroup s owns RADIX_SG_SIZE * ITEMS consecutive keys of the tile, item i of
// lane l is key s * SG * ITEMS + i * SG + l. Loads are coalesced and a subgroup's items are in key order.
uint sort_striped_index(uint item) {
  return RADIX_SG_ID * (RADIX_SG_SIZE * ITEMS) + item * RADIX_SG_SIZE + RADIX_SG_LANE;
}

#if defined(SORT_RANKING) || defined(SORT_WORKGROUP_SCAN)
#if !defined(VKPRIM_NO_SUBGROUPS)
shared uint s_sums[WG_SIZE / RADIX_MIN_SG];
#else
shared uint s_scan[2u * WG_SIZE];
shared uint s_lane_digit[WG_SIZE];
#endif


// Workgroup exclusive scan (add) of one u32 per invocation; `total` is the sum over the workgroup.
// Call from uniform control flow. The sort keeps these steps rather than common/workgroup_scan.glsl's:
// through that header (the same fold, with its partial-subgroup store) sorts ran 0.5-2% slower on an H200
// (docs/PERFORMANCE.md, Radix sort).
uint sort_workgroup_scan(uint v, out uint total) {
  const uint tid = gl_LocalInvocationIndex;
#if !defined(VKPRIM_NO_SUBGROUPS)
  const uint inclusive = subgroupInclusiveAdd(v);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) s_sums[gl_SubgroupID] = inclusive;
  barrier();
  uint before = 0u;
  total = 0u;
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    const uint x = s_sums[s];
    before += s < gl_SubgroupID ? x : 0u;
    total += x;
  }
  barrier();
  return before + inclusive - v;
#else
  // Hillis-Steele over two halves of s_scan.
  uint src = 0u;
  s_scan[tid] = v;
  barrier();
  for (uint d = 1u; d < WG_SIZE; d <<= 1u) {
    const uint x = s_scan[src * WG_SIZE + tid] + (tid >= d ? s_scan[src * WG_SIZE + tid - d] : 0u);
    src ^= 1u;
    s_scan[src * WG_SIZE + tid] = x;
    barrier();
  }
  const uint inclusive = s_scan[src * WG_SIZE + tid];
  total = s_scan[src * WG_SIZE + WG_SIZE - 1u];
  barrier();
  return inclusive - v;
#endif
}

#endif  // SORT_RANKING || SORT_WORKGROUP_SCAN

#if defined(SORT_RANKING)
// ---- Shared memory ----------------------------------------------------------------------------------
// s_mem holds first the per-subgroup digit counters (a row of COUNTER_ROW_WORDS per subgroup), then, once
// ranks are in registers, the tile being scattered (KEY_WORDS or value words per key).
// A counter per digit where the rows fit in the staging area (NVIDIA's default shapes: 384 x 14, 18 and 22
// in two rounds, 512 x 8), else two 16-bit counters per word (small subgroups, e.g. lavapipe's 8), so the
// counters never add shared memory.
// STAGE_ROUNDS (specialization constant 4: 1, or 2 with ITEMS even): the tile is staged and scattered in
// that many rounds of STAGE_KEYS positions each, so a tile may be twice what shared memory stages at once
// (shared memory bounds onesweep's tile: src/sort.cpp).
layout(constant_id = 4) const uint STAGE_ROUNDS = 1u;
const uint STAGE_KEYS = TILE / STAGE_ROUNDS;
const uint ITEMS_PER_ROUND = ITEMS / STAGE_ROUNDS;
// Wide values (VKPRIM_VALUE_UNIT) are gathered through in-tile source indices, one word per position
// (sort_scatter_tile), so they stage no more than the keys; VKPRIM_VALUE_WORDS is 0 for them.
const uint STAGE_WORDS = STAGE_KEYS * (KEY_WORDS > uint(VKPRIM_VALUE_WORDS) ? KEY_WORDS : uint(VKPRIM_VALUE_WORDS));
const bool WIDE_COUNTERS = (WG_SIZE / RADIX_MIN_SG) * RADIX_DIGITS <= STAGE_WORDS;
const uint COUNTER_ROW_WORDS = WIDE_COUNTERS ? RADIX_DIGITS : RADIX_DIGITS / 2u;
const uint COUNTER_MASK = WIDE_COUNTERS ? 0xFFFFFFFFu : 0xFFFFu;
const uint COUNTER_WORDS = (WG_SIZE / RADIX_MIN_SG) * COUNTER_ROW_WORDS;
const uint SMEM_WORDS = COUNTER_WORDS > STAGE_WORDS ? COUNTER_WORDS : STAGE_WORDS;
shared uint s_mem[SMEM_WORDS];
// s_start[d]: the first in-tile position of digit d. Once the tile's global offsets are known, it is
// turned in place into s_base[d], the global position of in-tile position 0 for digit d's keys: one array
// under two names, because shared memory sets the tile size (src/sort.cpp: NVIDIA runs one onesweep
// workgroup per SM instead of two above ~24 KiB).
shared uint s_start[RADIX_DIGITS];
#define s_base s_start
shared uint s_count[RADIX_DIGITS];   // keys of each digit in the tile (free once the tile is ranked)
shared uint s_rank_bit;              // pc.bit, read back: sort_opaque_zero, sort_rank_bit
// ---- Stable rank of a tile --------------------------------------------------------------------------
// Per-invocation tile registers: the ordered keys and, after the ranking, each key's position in the tile
// sorted stably by digit. Digits are recomputed from the keys (a few ALU operations) instead of living in
// ITEMS more registers: the ranking kernels are bound by how many tiles fit on a multiprocessor at once,
// i.e. by registers and shared memory.
// Slots past the count hold the padding key (every bit set once ordered): its digit is the largest of every
// pass, and padding slots come last in tile order, so a ranked tile's first (count - tile start) positions
// are its real keys and the padding takes the rest. So ranking keeps no per-slot validity (NVIDIA's compiler
// expands such a mask into a flag register per item). Only the tile's count of the largest digit includes
// padding, and only in the last tile, whose counts no other tile reads; scatters write positions below the
// count only.
KEY_T t_key[ITEMS];
// Onesweep with values keeps two 16-bit positions per register (a tile holds at most 32768 keys). NVIDIA's
// compiler still unpacks most of them early, yet with sort_scatter_tile's packed digits the pairs kernel at
// 384 x 18 needed 68 registers instead of 72 (alone: 76 against 75), which lets 384 x 22 fit in 80: two
// workgroups per SM. Keys-only kernels stay unpacked: there packing saves no register (56) and makes the
// digit passes 3% slower (348 -> 358 us at 2^26; H100).
#if defined(SORT_VALUES) && defined(SORT_RANK_FEW_REGISTERS)
#define SORT_PACKED_POSITIONS 1
#endif
#if defined(SORT_PACKED_POSITIONS)
uint t_pos2[(ITEMS + 1u) / 2u];
uint pos_get(uint i) { return (t_pos2[i >> 1u] >> ((i & 1u) * 16u)) & 0xFFFFu; }
void pos_set(uint i, uint v) {
  if ((i & 1u) == 0u) t_pos2[i >> 1u] = v;
  else t_pos2[i >> 1u] |= v << 16u;
}
void pos_add(uint i, uint v) { t_pos2[i >> 1u] += v << ((i & 1u) * 16u); }
#define POS_ORDER_SHIFT 15u  // positions < 2^15: `order` stays 0, as the compiler cannot prove
#else
uint t_pos[ITEMS];
uint pos_get(uint i) { return t_pos[i]; }
void pos_set(uint i, uint v) { t_pos[i] = v; }
void pos_add(uint i, uint v) { t_pos[i] += v; }
#define POS_ORDER_SHIFT 16u
#endif

// 0, read back from shared memory: indices computed with it cannot be tied to equal ones computed earlier,
// so the compiler recomputes them (a few ALU operations) instead of holding them per item. Used by the value
// loads (else each item's index and bounds flag stays live from the key loads) and the value scatter (else
// each position and bounds flag from the key scatter): pairs onesweep at 384 x 13 needs 55 registers
// instead of 72 (H100). Valid after sort_count_tile's first barrier.
uint sort_opaque_zero() { return s_rank_bit - SORT_PASS_BIT; }

// The digit of item i of this invocation at `bit` (padding slots: the largest digit).
uint t_digit(uint i, uint bit) { return sort_digit(t_key[i], bit, SORT_PASS_MASK); }

// Digit d's counter in a subgroup's row: its word and the shift of its half in packed rows.
uint counter_word(uint d) { return WIDE_COUNTERS ? d : d >> 1u; }
uint counter_shift(uint d) { return WIDE_COUNTERS ? 0u : (d & 1u) * 16u; }

// Loads tile `tile` of keys_in (warp-striped), ordered, into t_key, with padding keys past n.
void sort_load_tile(uint tile, uint n) {
  sort_load_ordered(tile * TILE, sort_striped_index(0u), RADIX_SG_SIZE, n, t_key);
}

// Ranking is split in two so that onesweep can publish the tile's digit counts before the tile's keys are
// positioned (Adinets & Merrill's "early counts"):
//  sort_count_tile: the multisplit (Onesweep; CUB's BlockRadixRankMatch): per item, the lanes sharing a
//    digit are found with eight ballots (or subgroupPartitionNV with VKPRIM_PARTITIONED), the lowest of
//    them adds their number to the subgroup's counter for the digit and shares the old value, so t_pos
//    becomes the key's rank among its subgroup's keys of that digit; then a column pass over the subgroups'
//    counter rows leaves in each counter the keys of that digit in earlier subgroups, and in s_count the
//    tile's count of each digit;
//  sort_rank_counted_tile: a scan of s_count gives s_start; added to every row, each counter becomes the
//    in-tile position of its subgroup's first key of the digit, which one shared read per item adds to t_pos.
// Keys of equal digit keep their tile order (subgroup-major, then item, then lane = the striped key order),
// which makes every pass stable. Both end with a barrier (s_count visible; s_mem free for staging).
// (Not a pass of shared atomics ahead of a multisplit on prefilled counters: NVIDIA's compiler wraps each of
// those atomics in a MATCH.ALL test for a warp-uniform address, so such a pass runs ~11 instructions per key
// where the added read takes ~8; with whole-word counters as well, onesweep's digit passes measured 503-508
// us against 508-513 at 2^26 keys on the H100.)
// SORT_RANK_FEW_REGISTERS (onesweep), two ways to keep NVIDIA's compiler from holding per-item values:
//  - digits through a shared copy of pc.bit the compiler cannot see through: with pc.bit it kept every
//    item's counter address from one loop over the items to the next (a register per item) instead of
//    recomputing it (two ALU operations);
//  - `order` is always 0 (positions are below 2^16), but item i's digit depends on it, so item i - 1's
//    position is computed before item i is ranked; otherwise the compiler deferred each position's last
//    operations to the staging loop and held their inputs per item instead of the result.
// With both (and the padding keys), onesweep at 384 x 13 needed 54 registers instead of 80: three
// workgroups per SM instead of two, 9-10% faster. reduce_then_scan's 512 x 8 downsweep, whose occupancy
// they do not change (60 -> 50 registers, two workgroups per SM either way), sorted 18% slower with the
// shared copy, with or without `order`, so it goes without both (H100, driver 580.159.04).
// With the single multisplit (below) the unrolled column pass sets onesweep's peak at 65 registers (384 x
// 13), two workgroups per SM; without both tricks it needs 80, still two, and its digit passes measured
// 502-506 us against 503-508 at 2^26: the tricks stay for the three-workgroup shapes they allow.
uint sort_rank_bit() {
#if defined(SORT_RANK_FEW_REGISTERS)
  return s_rank_bit;
#else
  return SORT_PASS_BIT;
#endif
}

void sort_count_tile() {
  const uint tid = gl_LocalInvocationIndex;
  // Only the rows of the subgroups that exist (COUNTER_WORDS is sized for the smallest subgroup).
  const uint used_counter_words = (WG_SIZE / RADIX_SG_SIZE) * COUNTER_ROW_WORDS;
  for (uint w = tid; w < used_counter_words; w += WG_SIZE) s_mem[w] = 0u;
  if (tid == 0u) s_rank_bit = SORT_PASS_BIT;
  barrier();
  const uint row = RADIX_SG_ID * COUNTER_ROW_WORDS;
  const uint bit = sort_rank_bit();
  uint order = 0u;
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
#if defined(SORT_RANK_ROWS_BELOW) && !defined(VKPRIM_NO_SUBGROUPS)
    // A subgroup row wholly at or past SORT_RANK_ROWS_BELOW holds only padding keys, which rank after every
    // real key whatever their counts: skipped (subgroup-uniform; the emulation's loop has barriers).
    if (sort_striped_index(i) - RADIX_SG_LANE >= SORT_RANK_ROWS_BELOW) continue;
#endif
    const uint d = t_digit(i, bit) | order;
    const uint word = row + counter_word(d);
    const uint shift = counter_shift(d);
#if !defined(VKPRIM_NO_SUBGROUPS)
#if defined(VKPRIM_PARTITIONED)
    // One instruction finds the lanes with the same digit (match.any on NVIDIA).
    const uvec4 peers = subgroupPartitionNV(d);
#else
    uvec4 peers = subgroupBallot(true);  // the subgroup's lanes: ~votes also sets bits past its size
    [[unroll]] for (uint b = 0u; b < 8u; ++b) {
      const bool set = ((d >> b) & 1u) != 0u;
      const uvec4 votes = subgroupBallot(set);
      peers &= set ? votes : ~votes;
    }
#endif
    const uvec4 below = peers & gl_SubgroupLtMask;
    const uint before = bitCount(below.x) + bitCount(below.y) + bitCount(below.z) + bitCount(below.w);
    const uint same = bitCount(peers.x) + bitCount(peers.y) + bitCount(peers.z) + bitCount(peers.w);
    const uint leader = subgroupBallotFindLSB(peers);
    uint old = 0u;
    if (before == 0u) old = SHARED_ATOMIC_ADD(s_mem[word], same << shift);
    old = subgroupShuffle(old, leader);
    pos_set(i, ((old >> shift) & COUNTER_MASK) + before);
#else
    s_lane_digit[tid] = d;
    barrier();
    const uint lane = RADIX_SG_LANE;
    const uint group_first = tid - lane;
    uint before = 0u, same = 0u;
    for (uint j = 0u; j < RADIX_SG_SIZE; ++j) {
      const bool match = s_lane_digit[group_first + j] == d;
      same += match ? 1u : 0u;
      before += (match && j < lane) ? 1u : 0u;
    }
    const uint old = s_mem[word];
    barrier();
    // One writer per (group, digit), the lowest lane sharing it; an atomic because two digits may share a word.
    if (before == 0u) SHARED_ATOMIC_ADD(s_mem[word], same << shift);
    pos_set(i, ((old >> shift) & COUNTER_MASK) + before);
#endif
#if defined(SORT_RANK_FEW_REGISTERS)
    order = pos_get(i) >> POS_ORDER_SHIFT;
#endif
  }
  barrier();
  // Column pass: no carry crosses packed halves since a tile holds < 65536 keys. The loops run over the most
  // rows there can be, so they unroll and the loads issue back to back. With the positions live here, that
  // costs registers (onesweep 384 x 13: 65 instead of 52, two workgroups per SM instead of three), yet the
  // digit passes measured 2-4% faster than in two builds whose loops hid their trip count from the compiler
  // (one of them with other changes too): 504-508 against 519-527 us at 2^26 keys (H100). The
  // column and row passes are a serial step of every tile.
  const uint subgroups = WG_SIZE / RADIX_SG_SIZE;
  if (tid < COUNTER_ROW_WORDS) {
    uint running = 0u;
    [[unroll]] for (uint s = 0u; s < WG_SIZE / RADIX_MIN_SG; ++s) {
      if (s < subgroups) {
        const uint x = s_mem[s * COUNTER_ROW_WORDS + tid];
        s_mem[s * COUNTER_ROW_WORDS + tid] = running;
        running += x;
      }
    }
    if (WIDE_COUNTERS) {
      s_count[tid] = running;
    } else {
      s_count[2u * tid] = running & 0xFFFFu;
      s_count[2u * tid + 1u] = running >> 16u;
    }
  }
  barrier();
}

void sort_rank_counted_tile() {
  const uint tid = gl_LocalInvocationIndex;
  uint total;
  const uint start = sort_workgroup_scan(tid < RADIX_DIGITS ? s_count[tid] : 0u, total);
  if (tid < RADIX_DIGITS) s_start[tid] = start;
  const uint row = RADIX_SG_ID * COUNTER_ROW_WORDS;
  const uint bit = sort_rank_bit();
  barrier();
  const uint subgroups = WG_SIZE / RADIX_SG_SIZE;
  if (tid < COUNTER_ROW_WORDS) {
    // Positions stay below TILE <= 32768, so a packed low half never carries into the high one.
    const uint starts = WIDE_COUNTERS ? s_start[tid] : s_start[2u * tid] | (s_start[2u * tid + 1u] << 16u);
    [[unroll]] for (uint s = 0u; s < WG_SIZE / RADIX_MIN_SG; ++s)  // as the column pass
      if (s < subgroups) s_mem[s * COUNTER_ROW_WORDS + tid] += starts;
  }
  barrier();
  uint order = 0u;
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint d = t_digit(i, bit) | order;
    pos_add(i, (s_mem[row + counter_word(d)] >> counter_shift(d)) & COUNTER_MASK);
#if defined(SORT_RANK_FEW_REGISTERS)
    order = pos_get(i) >> POS_ORDER_SHIFT;
#endif
  }
  barrier();  // s_mem is reused for staging next
}

// Both steps, for kernels that publish nothing in between: fills t_pos, s_count and s_start.
void sort_rank_tile() {
  sort_count_tile();
  sort_rank_counted_tile();
}

// Staging (the default): the ranked keys go to shared memory at their tile positions, so that the scatter's
// consecutive invocations write consecutive positions (the global writes of one digit are contiguous).
// sort_stage_keys stages the first round (all of the tile where STAGE_ROUNDS is 1); once staged, those keys
// need no registers, which is why onesweep stages before its look-back; sort_scatter_tile stages the other
// rounds. Call after the ranking's closing barrier. VKPRIM_DIRECT_SCATTER (SortScatter::direct): nothing is
// staged, and sort_scatter_tile writes each key from registers (no staging round trip, but a subgroup's
// stores spread over up to a subgroup's worth of digit runs).
// The staging-round test is spelled out here and in sort_scatter_tile's value staging on purpose: one shared
// helper for it (with an out parameter) made NVIDIA's u32 pairs kernel 8% slower (75 registers instead of
// 80 and a worse schedule; 2196 -> 2375 us at 2^26 on the H100).
void sort_stage_key_round(uint round) {
  const uint first = round * STAGE_KEYS;
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint at = pos_get(i) - first;  // wraps above STAGE_KEYS for earlier rounds' positions
    if (STAGE_ROUNDS == 1u || at < STAGE_KEYS) {
#if defined(VKPRIM_KEY64)
      s_mem[at] = t_key[i].x;
      s_mem[STAGE_KEYS + at] = t_key[i].y;
#else
      s_mem[at] = t_key[i];
#endif
    }
  }
}

void sort_stage_keys() {
#if !defined(VKPRIM_DIRECT_SCATTER)
  sort_stage_key_round(0u);
#endif
}

// Scatters the ranked tile to keys_out[s_base[digit] + position] (and values alike). Call after a barrier
// that follows sort_stage_keys and the writes of s_base. Ends with a barrier (shared memory is free).
// One guarded loop serves full tiles too: a second, unguarded one cuts NVIDIA's code from ~16 to ~10
// instructions per key yet makes the digit passes slower (464-467 -> 482-485 us at 2^26 u32 keys, pairs
// 615-625 -> 633-644 on the H100).
// sort_scatter_range: the same for the tile of keys from `range_first` (a multiple of TILE or not: the
// segmented sort's tiles start where their segment does), n the end of the tile's run of keys.
void sort_scatter_range(uint range_first, uint n) {
  const uint tid = gl_LocalInvocationIndex;
  const uint out_shift = sort_shift(1u);
#if defined(SORT_VALUES) || defined(VKPRIM_DIRECT_SCATTER)
  const uint first = range_first + sort_opaque_zero();  // for the bounds and loads below (sort_opaque_zero)
#endif
#if defined(SORT_VALUES)
  const uint in_shift = sort_shift(2u);
  const uint value_shift = sort_shift(3u);
#endif
#if defined(VKPRIM_DIRECT_SCATTER)
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    if (first + sort_striped_index(i) < n) {
      const uint to = s_base[t_digit(i, SORT_PASS_BIT)] + pos_get(i);
      SORT_KEY_OUT(out_shift + to, sort_unordered(t_key[i]));
#if defined(SORT_WIDE_VALUES)
      const uint from = (in_shift + first + sort_striped_index(i)) * VALUE_UNITS;
      for (uint u = 0u; u < VALUE_UNITS; ++u) values_out[(value_shift + to) * VALUE_UNITS + u] = values_in[from + u];
#elif VKPRIM_VALUE_WORDS > 0
      values_out[value_shift + to] = values_in[in_shift + first + sort_striped_index(i)];
#endif
    }
  }
#else
  const uint tile_n = min(TILE, n - range_first);
#if defined(SORT_VALUES)
  // The digit of each position this invocation scatters, four per register, for the values' scatter.
  uint out_digits[(ITEMS + 3u) / 4u];
  [[unroll]] for (uint w = 0u; w < (ITEMS + 3u) / 4u; ++w) out_digits[w] = 0u;
#endif
  // Item k covers tile positions k * WG_SIZE + tid, staged at (k % ITEMS_PER_ROUND) * WG_SIZE + tid in
  // round k / ITEMS_PER_ROUND; each later round is staged when its first item comes (uniform: the loop is
  // unrolled over constants).
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    if (k != 0u && k % ITEMS_PER_ROUND == 0u) {
      barrier();
      sort_stage_key_round(k / ITEMS_PER_ROUND);
      barrier();
    }
    const uint j = k * WG_SIZE + tid;
    const uint at = (k % ITEMS_PER_ROUND) * WG_SIZE + tid;
    if (j < tile_n) {
#if defined(VKPRIM_KEY64)
      const KEY_T key = uvec2(s_mem[at], s_mem[STAGE_KEYS + at]);
#else
      const KEY_T key = s_mem[at];
#endif
      const uint d = sort_pass_digit(key);
#if defined(SORT_VALUES)
      out_digits[k >> 2u] |= d << ((k & 3u) * 8u);
#endif
      SORT_KEY_OUT(out_shift + s_base[d] + j, sort_unordered(key));
    }
  }
#if defined(SORT_WIDE_VALUES)
  // Wide values are gathered, not staged: in each staging round every ranked item leaves its in-tile source
  // index at its tile position in shared memory, then position k * WG_SIZE + tid copies the value of that
  // source to its output, so consecutive invocations write consecutive values of a digit's run. Shared
  // memory stays what the keys need whatever the value size; the gathered reads stay within the tile's
  // values, which the cache holds. Measured on the H100 with 16-byte values at 2^24 (384 x 12): restrict
  // buffers (1260 us) and loads batched four items at a time (1255 us; 64-byte values 4.8 -> 9.6 ms) gained
  // nothing over this loop (1260 us); the direct scatter, each value copied straight from its item, took
  // 4539 us (scattered 16-byte stores).
  const uint tile_first = (in_shift + first) * VALUE_UNITS;
  const uint value_tid = tid + sort_opaque_zero();
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    if (k % ITEMS_PER_ROUND == 0u) {
      barrier();
      const uint round_first = (k / ITEMS_PER_ROUND) * STAGE_KEYS;
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
        const uint at = pos_get(i) - round_first;  // wraps above STAGE_KEYS for other rounds' positions
        if (STAGE_ROUNDS == 1u || at < STAGE_KEYS) s_mem[at] = sort_striped_index(i);
      }
      barrier();
    }
    const uint j = k * WG_SIZE + value_tid;
    if (j < tile_n) {
      const uint from = tile_first + s_mem[(k % ITEMS_PER_ROUND) * WG_SIZE + value_tid] * VALUE_UNITS;
      const uint to = (value_shift + s_base[(out_digits[k >> 2u] >> ((k & 3u) * 8u)) & 0xFFu] + j) * VALUE_UNITS;
      for (uint u = 0u; u < VALUE_UNITS; ++u) values_out[to + u] = values_in[from + u];
    }
  }
#elif VKPRIM_VALUE_WORDS > 0
  // Values follow the keys' permutation: loaded at the keys' source positions, staged at t_pos round by
  // round like the keys.
  VAL_T value[ITEMS];
  const uint value_base = first + sort_striped_index(0u);
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = value_base + i * RADIX_SG_SIZE;  // first + sort_striped_index(i), from one base
#if VKPRIM_VALUE_WORDS == 2
    value[i] = index < n ? values_in[in_shift + index] : uvec2(0u);
#else
    value[i] = index < n ? values_in[in_shift + index] : 0u;
#endif
  }
  // The keys' loop computed the same positions and bounds: recomputed here (see sort_opaque_zero).
  const uint value_tid = tid + sort_opaque_zero();
  // `chain` is always 0 (global positions are below 2^30: kMaxSortCount), but each item's position and
  // digit depend on the previous item's s_base read, so NVIDIA's compiler cannot compute every item's
  // digit, s_base address and bounds flag ahead of the loop and hold them all (with the digits unpacked it
  // does: 18 digits, 18 addresses and 10 flags live at once). Digits packed and chained: pairs onesweep at
  // 384 x 18 needs 72 registers instead of 75 (H100).
  uint chain = 0u;
  [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
    if (k % ITEMS_PER_ROUND == 0u) {
      barrier();
      const uint round_first = (k / ITEMS_PER_ROUND) * STAGE_KEYS;
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
        const uint at = pos_get(i) - round_first;
        if (STAGE_ROUNDS == 1u || at < STAGE_KEYS) {
#if VKPRIM_VALUE_WORDS == 2
          s_mem[at] = value[i].x;
          s_mem[STAGE_KEYS + at] = value[i].y;
#else
          s_mem[at] = value[i];
#endif
        }
      }
      barrier();
    }
    const uint j = k * WG_SIZE + value_tid + chain;
    const uint at = (k % ITEMS_PER_ROUND) * WG_SIZE + value_tid + chain;
    if (j < tile_n) {
      const uint base = s_base[(out_digits[k >> 2u] >> ((k & 3u) * 8u + chain)) & 0xFFu];
      chain = base >> 30u;
#if VKPRIM_VALUE_WORDS == 2
      values_out[value_shift + base + j] = uvec2(s_mem[at], s_mem[STAGE_KEYS + at]);
#else
      values_out[value_shift + base + j] = s_mem[at];
#endif
    }
  }
#endif
#endif
  barrier();  // the next tile may reuse shared memory
}

void sort_scatter_tile(uint tile, uint n) { sort_scatter_range(tile * TILE, n); }

#endif  // SORT_RANKING

#endif  // VKPRIM_RADIX_GLSL
