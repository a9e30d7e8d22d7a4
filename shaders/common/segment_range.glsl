// One lane's share of a range of the input binding, for lanes that split a segment or a chunk between
// them: vk_range_share(first, last, lane, lanes) combines the elements of input[first, last) that lane
// `lane` of `lanes` takes. Requires common/config.glsl (ITEMS) and common/segment_io.glsl.
//   Built-in operators: lanes stride over the range (one pass: element lane, lane + lanes, ...; 16-byte
//   vectors between the first and last vector boundary, ITEMS of them in flight per lane), the order any
//   commutative operator allows; the order is fixed by the range and `lanes`, so float sums repeat bit for
//   bit. VKPRIM_ORDERED (user operators): lane takes the contiguous run lane * ceil(len / lanes) ..., so the
//   lanes' shares combined in lane order give the left-to-right result.
// Where lanes > 1 every trip count depends on first, last and lanes only, so lanes of a team that agree on the
// range run the same iterations and never branch apart before the team's reduction (docs/ALGORITHMS.md,
// "Reconvergence"); a load past the range repeats the range's last element and vk_pick drops its value.
#ifndef VKPRIM_SEGMENT_RANGE_GLSL
#define VKPRIM_SEGMENT_RANGE_GLSL

#include "common/subgroup.glsl"

// acc combined with element i of the range when i < limit (last >= 1: a range that is not empty).
VALUE_T vk_range_fold(VALUE_T acc, uint i, uint limit, uint last) {
  const VALUE_T x = in_values[pc.in_offset + min(i, last - 1u)];
  return vk_pick(i < limit, vk_op(acc, x), acc);
}

VALUE_T vk_range_share(uint first, uint last, uint lane, uint lanes) {
  VALUE_T acc = vk_identity();
  if (first >= last) return acc;
#if defined(VKPRIM_ORDERED)
  const uint len = last - first;
  const uint per = len / lanes + (len % lanes != 0u ? 1u : 0u);
  const uint start = first + lane * per;
  for (uint j = 0u; j < per; ++j) acc = vk_range_fold(acc, start + j, last, last);
#else
  // Elements before the first vector boundary (head) and after the last one (tail): fewer than VEC_N each.
  const uint head_end = min(last, first + (VEC_N - (pc.in_offset + first) % VEC_N) % VEC_N);
  const uint vectors = (last - head_end) / VEC_N;
  const uint tail = head_end + vectors * VEC_N;
  // A team runs VEC_N - 1 slots (the same trips in every lane); one invocation alone only what it has.
  const uint edges = lanes == 1u ? max(head_end - first, last - tail) : VEC_N - 1u + lane;
  for (uint h = lane; h < edges; h += lanes) {
    acc = vk_range_fold(acc, first + h, head_end, last);
    acc = vk_range_fold(acc, tail + h, last, last);
  }
  const uint first_vector = (pc.in_offset + head_end) / VEC_N;
  for (uint step = 0u; step < vectors; step += lanes * ITEMS) {
    VEC_T loaded[ITEMS];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
      loaded[k] = in_vectors[first_vector + min(step + k * lanes + lane, vectors - 1u)];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
      acc = vk_pick(step + k * lanes + lane < vectors, vk_op(acc, vk_vec_reduce(loaded[k])), acc);
  }
#endif
  return acc;
}

#endif  // VKPRIM_SEGMENT_RANGE_GLSL
