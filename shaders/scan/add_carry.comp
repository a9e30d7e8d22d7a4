#version 460
// Scan level add-back (GPU Gems 3 ch. 39, "uniform add"): every element of block g (param elements per
// block) of binding 1 becomes op(aux[g], element), where aux holds the exclusive scan of the block totals
// (window carry included). Elements >= count are left alone.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE. Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/scan_io.glsl"

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const VALUE_T carry = aux_values[pc.aux_offset + group];
  const uint block = pc.param;
  const uint base = group * block;
  const uint end = min(base + block, pc.count);
  for (uint i = base + gl_LocalInvocationIndex; i < end; i += WG_SIZE)
    out_values[pc.out_offset + i] = vk_op(carry, out_values[pc.out_offset + i]);
}
