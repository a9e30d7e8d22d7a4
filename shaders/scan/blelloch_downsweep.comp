#version 460
// Scan pass, Blelloch (1990): one global down-sweep level over the working array W (binding 2). Invocation
// j < param2 at stride s = param swaps and combines the pair: t = W[left]; W[left] = W[right];
// W[right] = op(W[right], t). The root level (SCAN_FIRST) starts from the window's carry-in instead of the
// identity (so the prefixes include it) and writes the carry-out op(carry-in, root). The last level
// (SCAN_LAST, s = 1) writes the output instead of W: exclusive = the prefix, inclusive = op(prefix, x);
// each invocation reads its own two inputs before writing them, so in place is safe.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE. Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/scan_io.glsl"

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint j = group * WG_SIZE + gl_LocalInvocationIndex;
  if (j >= pc.param2) return;
  const uint s = pc.param;
  const uint left = (2u * j + 1u) * s - 1u;
  const uint right = (2u * j + 2u) * s - 1u;
  const VALUE_T t = aux_values[pc.aux_offset + left];
  VALUE_T prefix = aux_values[pc.aux_offset + right];
  const bool has_carry = vk_scan_has_carry_in();
  if (vk_scan_flag(SCAN_FIRST)) {  // the root: one invocation
    const VALUE_T carry = vk_scan_carry_in(0u);
    if (vk_scan_flag(SCAN_CARRY_OUT_SLOT)) vk_scan_write_carry_out(vk_op(carry, prefix));
    prefix = carry;
  }
  const VALUE_T left_prefix = prefix;
  const VALUE_T right_prefix = vk_scan_flag(SCAN_FIRST) ? vk_scan_add_carry(has_carry, prefix, t) : vk_op(prefix, t);
  if (!vk_scan_flag(SCAN_LAST)) {
    aux_values[pc.aux_offset + left] = left_prefix;
    aux_values[pc.aux_offset + right] = right_prefix;
    return;
  }
  // s == 1: left = 2j, right = 2j + 1.
  const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
  const bool has_left = left < pc.count, has_right = right < pc.count;
  const VALUE_T x_left = has_left ? in_values[pc.in_offset + left] : vk_identity();
  const VALUE_T x_right = has_right ? in_values[pc.in_offset + right] : vk_identity();
  if (has_left) out_values[pc.out_offset + left] = exclusive ? left_prefix : vk_op(left_prefix, x_left);
  if (has_right) out_values[pc.out_offset + right] = exclusive ? right_prefix : vk_op(right_prefix, x_right);
}
