// A segment's range, shared by the segmented reduce (common/segment_io.glsl) and the segmented sort
// (common/segmented_sort.glsl): segment s of a fixed size is [s * size, (s + 1) * size), otherwise [begin, end)
// as read from its offsets; both ends are clamped to `bound`, and an end at or before the begin gives an
// empty range, so offsets past the input never reach memory outside it.
#ifndef VKPRIM_SEGMENT_BOUNDS_GLSL
#define VKPRIM_SEGMENT_BOUNDS_GLSL

uvec2 vk_clamped_segment(bool fixed_size, uint s, uint size, uint begin, uint end, uint bound) {
  const uint first = min(fixed_size ? s * size : begin, bound);
  return uvec2(first, clamp(fixed_size ? first + size : end, first, bound));
}

#endif  // VKPRIM_SEGMENT_BOUNDS_GLSL
