// The engine's own pass between vkprim's sort and run-length encoding: the tile id of each sorted splat
// key (tile << 16 | depth16), so that runs of equal tile ids are the tiles' ranges.
//
// The grid covers the largest count the frame allows; the visible count comes from the GPU (the Select
// before the sort wrote it), so invocations past it do nothing and the CPU never needs the count.
#version 450
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer SortedKeys { uint sorted_key[]; };
layout(std430, binding = 1) readonly buffer VisibleCount { uint visible_count; };
layout(std430, binding = 2) writeonly buffer TileIds { uint tile_id[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < visible_count) tile_id[i] = sorted_key[i] >> 16;
}
