#version 460
// Segmented sort, small segments: one workgroup per batch of the batch list (classify.comp), a batch being up
// to 255 small segments packed end to end into one tile, or one segment of up to a tile (longer than
// medium_max). The workgroup loads
// the batch's keys (gathered from their segments), sorts the tile with the block-wide radix sort of
// common/radix_block.glsl over every digit pass, and where the batch holds several segments runs one more
// pass over each key's slot (its segment's place in the batch) as the most significant digit: stable, so
// each segment's keys come out sorted in the run of tile positions its slot spans, and are stored back to
// that segment. Each item carries its tile position of origin through the passes, from which its value is
// gathered at the end. Every key and value is read before any is written and a batch's segments are its
// own, so the sort is in place (bindings 0 / 2 and 1 / 3 are the caller's buffers).
// Defines: VKPRIM_KEY64, VKPRIM_VALUE_WORDS (0, 1 or 2), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (>= 256), ITEMS, SUBGROUP_MIN, KEY_FLAGS. Dispatched from SEG_ENTRY_BATCHES.
// Bindings and push constants: common/segmented_sort.glsl (bit = begin_bit, flags carry the digit passes).
#extension GL_GOOGLE_include_directive : require
#define SEG_BLOCK_SORT 1
#include "common/segmented_sort.glsl"

shared uint s_slot_first[SEG_MAX_SLOTS];  // tile position of each segment's first key
shared uint s_slot_begin[SEG_MAX_SLOTS];  // its key index

uint t_src[ITEMS];  // the tile position each item was loaded from

// The slot of tile position `at`: the last whose first position is at most it (small segments hold 2 keys or
// more, so first positions increase).
uint seg_slot(uint at, uint slots) {
  uint lo = 0u, hi = slots;
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) / 2u;
    if (s_slot_first[mid] <= at) lo = mid;
    else hi = mid;
  }
  return lo;
}

// The key index of tile position `at` (< the batch's keys).
uint seg_key_index(uint at, uint slots) {
  const uint slot = seg_slot(at, slots);
  return s_slot_begin[slot] + at - s_slot_first[slot];
}

// Moves t_key and t_src to the order just ranked (striped, padding past n). From uniform control flow.
void seg_permute(uint n) {
  sort_block_stage_keys(n);
  barrier();
  sort_block_reload_keys(n);
  barrier();
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) sort_block_stage_word(i, 0u, t_src[i], n);
  barrier();
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = sort_striped_index(i);
    if (index < n) t_src[i] = sort_block_staged_word(index, 0u);
  }
  barrier();
}

// The slot pass: the slot of each key's segment as one more (most significant) digit.
void seg_sort_slots(uint n, uint slots) {
  KEY_T keys[ITEMS];
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    keys[i] = t_key[i];
    const uint slot = seg_slot(t_src[i], slots);
#if defined(VKPRIM_KEY64)
    t_key[i] = sort_striped_index(i) < n ? uvec2(slot, 0u) : SORT_PAD_KEY;
#else
    t_key[i] = sort_striped_index(i) < n ? slot : SORT_PAD_KEY;
#endif
  }
  sort_block_rank(0u, 0xFFu, n);  // slots < 255: the padding key's digit 255 ranks last
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) t_key[i] = keys[i];
  seg_permute(n);
}

// Item i, now at tile position striped(i), goes to its segment's key index of that position; its value
// comes from the key index of its origin.
void seg_store(uint n, uint slots) {
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = sort_striped_index(i);
    if (index < n) SORT_KEY_OUT(sort_shift(1u) + seg_key_index(index, slots), sort_unordered(t_key[i]));
  }
#if VKPRIM_VALUE_WORDS > 0
  VAL_T value[ITEMS];
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
    if (sort_striped_index(i) < n) value[i] = values_in[sort_shift(2u) + seg_key_index(t_src[i], slots)];
  memoryBarrierBuffer();
  barrier();  // every value of the batch is read before any is written (in place)
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = sort_striped_index(i);
    if (index < n) values_out[sort_shift(3u) + seg_key_index(index, slots)] = value[i];
  }
#endif
}

void main() {
  const uint group = vk_workgroup_index();
  if (group >= seg_batches()) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint first_member = meta[pc.batch_list + 2u * group];
  const uint slots = clamp(meta[pc.batch_list + 2u * group + 1u], 1u, SEG_MAX_SLOTS);
  uvec2 range = uvec2(0u);
  if (tid < slots) range = seg_bounds(meta[pc.member_list + first_member + tid]);
  uint total;
  const uint first = sort_workgroup_scan(range.y - range.x, total);  // ends with a barrier
  if (tid < slots) {
    s_slot_first[tid] = first;
    s_slot_begin[tid] = range.x;
  }
  const uint n = min(total, TILE);  // a batch fits a tile (classify.comp)
  barrier();
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint index = sort_striped_index(i);
    t_src[i] = index;
    t_key[i] = index < n ? sort_ordered(SORT_KEY_IN(sort_shift(0u) + seg_key_index(index, slots))) : SORT_PAD_KEY;
  }
  // `passes` and `slots` are uniform: so are the loops and their barriers.
  const uint passes = sort_passes();
  for (uint p = 0u; p < passes; ++p) {
    const uint bit = pc.bit + 8u * p;
    sort_block_rank(bit, sort_digit_mask(bit), n);
    seg_permute(n);
  }
  if (slots > 1u) seg_sort_slots(n, slots);
  seg_store(n, slots);
}
