#version 460
// reduce_then_scan, phase 2 of a digit pass: workgroup d scans row d of the digit table in place
// (exclusive: each entry becomes the number of keys with digit d in earlier workgroups' runs) and writes
// the row total to meta[META_REGION + d]. Dispatched as 256 workgroups.
// Defines: VKPRIM_NO_SUBGROUPS. Specialization: WG_SIZE. Bindings/push: common/radix.glsl; the table's
// width is pc.group_count (indirect: the workgroups of entry pc.groups_entry).
#extension GL_GOOGLE_include_directive : require
#define SORT_WORKGROUP_SCAN 1
#include "common/radix.glsl"

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint digit = vk_workgroup_index();
  if (digit >= RADIX_DIGITS) return;
  const uint width = sort_indirect() ? vk_indirect_groups(pc.groups_entry) : pc.group_count;
  const uint row = META_REGION + RADIX_DIGITS + digit * width;
  uint running = 0u;
  for (uint first = 0u; first < width; first += WG_SIZE) {
    const uint i = first + tid;
    const uint v = i < width ? meta[row + i] : 0u;
    uint total;
    const uint before = sort_workgroup_scan(v, total);
    if (i < width) meta[row + i] = running + before;
    running += total;
  }
  if (tid == 0u) meta[META_REGION + digit] = running;
}
