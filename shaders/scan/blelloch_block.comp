#version 460
// Scan level, Harris, Sengupta & Owens, "Parallel Prefix Sum (Scan) with CUDA", GPU Gems 3 ch. 39:
// work-efficient Blelloch (1990) scan of one block of 2 * WG_SIZE elements in shared memory (each
// invocation loads two, WG_SIZE apart), with the chapter's padding against shared-memory bank conflicts.
// Writes the block's scan (inclusive, or exclusive with SCAN_EXCLUSIVE) and, with SCAN_WRITE_SUMS, the
// block total to aux[group] for the next level. The top level (one block) starts from the window's
// carry-in (SCAN_CARRY_IN_SLOT) and writes the carry-out. Elements >= count are the identity.
// Defines: VKPRIM_TYPE_* (the operator is the VK_OP constant). Specialization: WG_SIZE (power of two). Bindings: common/scan_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/scan_io.glsl"

#define LOG_BANKS 5u
#define PADDED(i) ((i) + ((i) >> LOG_BANKS))

const uint BLOCK = 2u * WG_SIZE;
shared VALUE_T tree[BLOCK + (BLOCK >> LOG_BANKS)];
shared VALUE_T block_total;

VALUE_T load_or_identity(uint i) { return i < pc.count ? in_values[pc.in_offset + i] : vk_identity(); }

void main() {
  const uint group = vk_workgroup_index();
  if (group >= pc.group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint base = group * BLOCK;
  const uint ia = tid, ib = tid + WG_SIZE;
  const VALUE_T xa = load_or_identity(base + ia);
  const VALUE_T xb = load_or_identity(base + ib);
  tree[PADDED(ia)] = xa;
  tree[PADDED(ib)] = xb;
  // Up-sweep: build partial sums in place.
  uint offset = 1u;
  for (uint d = WG_SIZE; d > 0u; d >>= 1u) {
    barrier();
    if (tid < d) {
      const uint left = offset * (2u * tid + 1u) - 1u;
      const uint right = offset * (2u * tid + 2u) - 1u;
      tree[PADDED(right)] = vk_op(tree[PADDED(left)], tree[PADDED(right)]);
    }
    offset <<= 1u;
  }
  barrier();
  if (tid == 0u) {
    block_total = tree[PADDED(BLOCK - 1u)];
    tree[PADDED(BLOCK - 1u)] = vk_identity();
  }
  // Down-sweep: traverse back down, building the exclusive scan.
  for (uint d = 1u; d < BLOCK; d <<= 1u) {
    offset >>= 1u;
    barrier();
    if (tid < d) {
      const uint left = offset * (2u * tid + 1u) - 1u;
      const uint right = offset * (2u * tid + 2u) - 1u;
      const VALUE_T t = tree[PADDED(left)];
      tree[PADDED(left)] = tree[PADDED(right)];
      tree[PADDED(right)] = vk_op(tree[PADDED(right)], t);
    }
  }
  barrier();
  const bool exclusive = vk_scan_flag(SCAN_EXCLUSIVE);
  const bool has_carry = vk_scan_has_carry_in();
  const VALUE_T carry = vk_scan_carry_in(group);
  const VALUE_T ea = tree[PADDED(ia)], eb = tree[PADDED(ib)];
  const VALUE_T ya = vk_scan_add_carry(has_carry, carry, exclusive ? ea : vk_op(ea, xa));
  const VALUE_T yb = vk_scan_add_carry(has_carry, carry, exclusive ? eb : vk_op(eb, xb));
  if (base + ia < pc.count) out_values[pc.out_offset + base + ia] = ya;
  if (base + ib < pc.count) out_values[pc.out_offset + base + ib] = yb;
  if (tid == 0u) {
    if (vk_scan_flag(SCAN_WRITE_SUMS)) aux_values[pc.aux_offset + group] = block_total;
    if (vk_scan_flag(SCAN_CARRY_OUT_SLOT)) vk_scan_write_carry_out(vk_op(carry, block_total));
  }
}
