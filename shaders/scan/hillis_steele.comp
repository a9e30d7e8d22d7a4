#version 460
// Scan pass, Hillis & Steele (1986), "Data parallel algorithms": one global step of distance d = param,
// one element per invocation: dst[i] = op(src[i - d], src[i]) (src[i] when i < d). The runtime runs
// ceil(log2 n) steps (at least two) ping-ponging through two scratch arrays, so the last step
// (SCAN_LAST) reads scratch and writes the output: in place is safe. The last step adds the window's
// carry-in, shifts by one for the exclusive scan and writes the carry-out.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE. Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/scan_io.glsl"

VALUE_T step_value(uint i, uint d) {
  const VALUE_T v = in_values[pc.in_offset + i];
  return i >= d ? vk_op(in_values[pc.in_offset + i - d], v) : v;
}

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint i = group * WG_SIZE + gl_LocalInvocationIndex;
  if (i >= pc.count) return;
  const uint d = pc.param;
  if (!vk_scan_flag(SCAN_LAST)) {
    out_values[pc.out_offset + i] = step_value(i, d);
    return;
  }
  const bool has_carry = vk_scan_has_carry_in();
  const VALUE_T carry = vk_scan_carry_in(0u);
  if (vk_scan_flag(SCAN_EXCLUSIVE))
    out_values[pc.out_offset + i] = i == 0u ? carry : vk_scan_add_carry(has_carry, carry, step_value(i - 1u, d));
  else
    out_values[pc.out_offset + i] = vk_scan_add_carry(has_carry, carry, step_value(i, d));
  if (i == pc.count - 1u && vk_scan_flag(SCAN_CARRY_OUT_SLOT))
    vk_scan_write_carry_out(vk_op(carry, step_value(i, d)));
}
