#version 460
// Scatter ceiling of a radix digit pass (`vkprim bench scatter`): what a pass over D = 2^pc.bits digits in
// tiles of TILE = WG_SIZE * ITEMS keys could reach if ranking and look-back cost nothing. Not a primitive.
// The bench hands the keys grouped stably by digit within each tile, and key j of tile t goes to
// offsets[t * D + its digit] + j: its position after a stable pass on that digit (the keys of smaller digits,
// the digit's keys in earlier tiles, its rank in the tile, less the tile's keys of smaller digits). Loads are
// coalesced and stores fall in runs of about TILE / D keys, as a digit pass's scatter does. The tile's D
// offsets go to shared memory first, where a pass holds its digits' global bases after its look-back; their
// 4 D bytes per tile stand in for that look-back's state traffic. Values, where pc.values is 1, follow their
// keys.
// Specialization: WG_SIZE (a multiple of 32, not only powers of two), ITEMS. Push: key count, the digit's shift and bits (D <= MAX_DIGITS), values (0, 1).
// Bindings: 0 keys in, 1 keys out, 2 values in, 3 values out, 4 the offsets (tiles * D words).
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"

layout(push_constant) uniform Constants {
  uint count;
  uint shift;
  uint bits;
  uint values;
} pc;
layout(set = 0, binding = 0, std430) readonly buffer KeysIn { uint keys_in[]; };
layout(set = 0, binding = 1, std430) writeonly buffer KeysOut { uint keys_out[]; };
layout(set = 0, binding = 2, std430) readonly buffer ValuesIn { uint values_in[]; };
layout(set = 0, binding = 3, std430) writeonly buffer ValuesOut { uint values_out[]; };
layout(set = 0, binding = 4, std430) readonly buffer Offsets { uint offsets[]; };

#define MAX_DIGITS 4096u
shared uint s_offset[MAX_DIGITS];

void main() {
  const uint tile = vk_workgroup_index(), t = gl_LocalInvocationIndex;
  const uint digits = 1u << pc.bits, first = tile * WG_SIZE * ITEMS;
  if (first >= pc.count) return;  // the groups past the count, uniform
  for (uint d = t; d < digits; d += WG_SIZE) s_offset[d] = offsets[tile * digits + d];
  barrier();
  uint key[ITEMS], value[ITEMS];
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint j = first + i * WG_SIZE + t;
    key[i] = j < pc.count ? keys_in[j] : 0u;
    value[i] = j < pc.count && pc.values != 0u ? values_in[j] : 0u;
  }
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint j = i * WG_SIZE + t;
    if (first + j >= pc.count) continue;
    const uint at = s_offset[(key[i] >> pc.shift) & (digits - 1u)] + j;
    keys_out[at] = key[i];
    if (pc.values != 0u) values_out[at] = value[i];
  }
}
