#version 460
// Scan pass, Blelloch (1990), "Prefix sums and their applications": one global up-sweep (reduce) level
// over the power-of-two working array W (binding 2, scratch). Invocation j < param2 combines the pair
// at stride s = param: W[(2j+2)s - 1] = op(W[(2j+1)s - 1], W[(2j+2)s - 1]). The first level (SCAN_FIRST,
// s = 1) reads the input instead, with indices >= count read as the identity, so n need not be a power
// of two: W[2j] = x[2j], W[2j+1] = op(x[2j], x[2j+1]).
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE. Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/scan_io.glsl"

VALUE_T load_or_identity(uint i) { return i < pc.count ? in_values[pc.in_offset + i] : vk_identity(); }

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint j = group * WG_SIZE + gl_LocalInvocationIndex;
  if (j >= pc.param2) return;
  if (vk_scan_flag(SCAN_FIRST)) {
    const VALUE_T a = load_or_identity(2u * j);
    const VALUE_T b = load_or_identity(2u * j + 1u);
    aux_values[pc.aux_offset + 2u * j] = a;
    aux_values[pc.aux_offset + 2u * j + 1u] = vk_op(a, b);
    return;
  }
  const uint s = pc.param;
  const uint left = pc.aux_offset + (2u * j + 1u) * s - 1u;
  const uint right = pc.aux_offset + (2u * j + 2u) * s - 1u;
  aux_values[right] = vk_op(aux_values[left], aux_values[right]);
}
