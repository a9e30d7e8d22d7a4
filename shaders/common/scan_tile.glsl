// Tile layer of reduce_then_scan: a tile is WG_SIZE * ITEMS 16-byte vectors (VEC_N values each); row k of
// the tile is vectors k * WG_SIZE .. k * WG_SIZE + WG_SIZE - 1, and invocation tid owns vector
// k * WG_SIZE + tid of every row, so each row's loads and stores are coalesced. Bounded: values at
// element indices >= vk_scan_elements load as the identity and are not stored. 16-byte loads/stores where the
// binding's element shift allows (SCAN_IN_VECTORS / SCAN_OUT_VECTORS) and the vector is whole, scalar
// otherwise.
// Requires common/config.glsl and common/scan_io.glsl.
// Provides: vk_tile_first_vector(tile), vk_tile_full(tile), vk_tile_load_full(v), vk_tile_load(v),
// vk_tile_store(v, value).
#ifndef VKPRIM_SCAN_TILE_GLSL
#define VKPRIM_SCAN_TILE_GLSL

#include "common/config.glsl"
#include "common/scan_io.glsl"

// Vector index (within the window) of the vector invocation tid owns in row 0 of `tile`.
uint vk_tile_first_vector(uint tile) { return tile * (WG_SIZE * ITEMS) + gl_LocalInvocationIndex; }

// Whether every vector of `tile` is in range and may be read as one 16-byte load (then the tile's loads
// are issued without branches between them, all in flight before the first is used).
bool vk_tile_full(uint tile) {
  return vk_scan_elements - min(vk_scan_elements, tile * (WG_SIZE * ITEMS * VEC_N)) >= WG_SIZE * ITEMS * VEC_N &&
         vk_scan_flag(SCAN_IN_VECTORS);
}
VEC_T vk_tile_load_full(uint v) { return in_vectors[pc.in_offset / VEC_N + v]; }

VEC_T vk_tile_load(uint v) {
  const uint e = v * VEC_N;
  if (e + VEC_N <= vk_scan_elements && vk_scan_flag(SCAN_IN_VECTORS)) return in_vectors[pc.in_offset / VEC_N + v];
  VEC_T r;
#if defined(VKPRIM_TYPE_USER)
  // A struct from the buffer in a ?: makes glslang store a laid-out struct into a plain one (invalid SPIR-V).
  r[0] = vk_identity();
  if (e < vk_scan_elements) r[0] = in_values[pc.in_offset + e];
#else
  [[unroll]] for (uint c = 0u; c < VEC_N; ++c) r[c] = e + c < vk_scan_elements ? in_values[pc.in_offset + e + c] : vk_identity();
#endif
  return r;
}

void vk_tile_store(uint v, VEC_T value) {
  const uint e = v * VEC_N;
  if (e + VEC_N <= vk_scan_elements && vk_scan_flag(SCAN_OUT_VECTORS)) {
    out_vectors[pc.out_offset / VEC_N + v] = value;
    return;
  }
  [[unroll]] for (uint c = 0u; c < VEC_N; ++c)
    if (e + c < vk_scan_elements) out_values[pc.out_offset + e + c] = value[c];
}

#endif  // VKPRIM_SCAN_TILE_GLSL
