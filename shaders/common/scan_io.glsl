// Bindings, push constants and carries of the scan passes (all scan kernels share this binding model):
//   set 0 binding 0: input  (VALUE_T[] and VEC_T[] for 16-byte loads), element shift pc.in_offset
//   set 0 binding 1: output (VALUE_T[] and VEC_T[]; read too by the carry-add pass), shift pc.out_offset
//   set 0 binding 2: aux    (VALUE_T[]: block sums written, carries read, or a working array), pc.aux_offset
//   set 0 binding 3: carry slots (VALUE_T[2]): the running total carried from one storage-range window to
//                    the next; a pass reads slot P and writes slot 1 - P (P = SCAN_SLOT_PARITY), so one
//                    pass may read the previous window's carry and write its own.
// The runtime binds every buffer at an offset aligned to the device's storage alignment and 16 bytes and
// passes the element shift; SCAN_IN_VECTORS / SCAN_OUT_VECTORS say the shift is a multiple of VEC_N.
// Bindings a pass does not use are bound to a valid range that is never accessed.
#ifndef VKPRIM_SCAN_IO_GLSL
#define VKPRIM_SCAN_IO_GLSL

#include "common/types.glsl"

layout(push_constant) uniform ScanConstants {
  uint count;        // elements of this pass's level (within one window)
  uint in_offset;    // element shift of binding 0
  uint out_offset;   // element shift of binding 1
  uint group_count;  // workgroups of this dispatch (linearized across x, y, z)
  uint param;        // kernel-specific (distance, stride, block size)
  uint param2;       // kernel-specific (active invocations)
  uint flags;        // SCAN_* bits
  uint aux_offset;   // element shift of binding 2
} pc;

#define SCAN_IN_VECTORS 1u       // input shift is a multiple of VEC_N: 16-byte loads allowed
#define SCAN_OUT_VECTORS 2u      // output shift is a multiple of VEC_N: 16-byte stores allowed
#define SCAN_EXCLUSIVE 4u        // write the exclusive scan (else inclusive)
#define SCAN_CARRY_IN_SLOT 8u    // the carry-in is carry slot P (else the identity)
#define SCAN_CARRY_OUT_SLOT 16u  // write op(carry-in, total) to carry slot 1 - P
#define SCAN_WRITE_SUMS 32u      // write each workgroup's block total to aux[group]
#define SCAN_CARRY_FROM_AUX 64u  // the carry-in of workgroup g is aux[g]
#define SCAN_SLOT_PARITY 128u    // P
#define SCAN_FIRST 256u          // kernel-specific: first pass of a sequence
#define SCAN_LAST 512u           // kernel-specific: last pass of a sequence (writes the output)
#define SCAN_CARRY_TWO_LEVEL 1024u  // with SCAN_CARRY_FROM_AUX: the carry-in of g is
                                    // op(aux[param2 + g / param], aux[g]) (block-local prefix + block carry)
#define SCAN_INDIRECT 2048u      // record_indirect: count and group count are indirect entry
                                 // pc.flags >> SCAN_ENTRY_SHIFT's (kernels that define
                                 // VKPRIM_INDIRECT_BINDING, common/indirect.glsl)
#define SCAN_ENTRY_SHIFT 24u

layout(set = 0, binding = 0, std430) readonly buffer ScanInValues { VALUE_T in_values[]; };
layout(set = 0, binding = 0, std430) readonly buffer ScanInVectors { VEC_T in_vectors[]; };
layout(set = 0, binding = 1, std430) buffer ScanOutValues { VALUE_T out_values[]; };
layout(set = 0, binding = 1, std430) buffer ScanOutVectors { VEC_T out_vectors[]; };
layout(set = 0, binding = 2, std430) buffer ScanAux { VALUE_T aux_values[]; };
layout(set = 0, binding = 3, std430) buffer ScanCarry { VALUE_T carry_values[]; };

bool vk_scan_flag(uint bit) { return (pc.flags & bit) != 0u; }

#if defined(VKPRIM_INDIRECT_BINDING)
#include "common/indirect.glsl"
#endif

// This pass's element count and workgroup count, set once by vk_scan_begin() at the top of main: push
// constants, or the GPU-computed entry when recorded indirectly.
uint vk_scan_elements;
uint vk_scan_group_count;
void vk_scan_begin() {
#if defined(VKPRIM_INDIRECT_BINDING)
  if (vk_scan_flag(SCAN_INDIRECT)) {
    vk_scan_elements = vk_indirect_count(pc.flags >> SCAN_ENTRY_SHIFT);
    vk_scan_group_count = vk_indirect_groups(pc.flags >> SCAN_ENTRY_SHIFT);
    return;
  }
#endif
  vk_scan_elements = pc.count;
  vk_scan_group_count = pc.group_count;
}

bool vk_scan_has_carry_in() { return (pc.flags & (SCAN_CARRY_IN_SLOT | SCAN_CARRY_FROM_AUX)) != 0u; }

// The carry-in of workgroup (or tile) `group`: from aux, carry slot P, or the identity.
VALUE_T vk_scan_carry_in(uint group) {
  if (vk_scan_flag(SCAN_CARRY_FROM_AUX)) {
    const VALUE_T local = aux_values[pc.aux_offset + group];
    return vk_scan_flag(SCAN_CARRY_TWO_LEVEL) ? vk_op(aux_values[pc.param2 + group / pc.param], local) : local;
  }
  if (vk_scan_flag(SCAN_CARRY_IN_SLOT)) return carry_values[vk_scan_flag(SCAN_SLOT_PARITY) ? 1u : 0u];
  return vk_identity();
}

// op(carry, v), or v itself when there is no carry-in (keeps v bit-exact, e.g. -0.0 under add).
VALUE_T vk_scan_add_carry(bool has_carry, VALUE_T carry, VALUE_T v) { return has_carry ? vk_op(carry, v) : v; }

void vk_scan_write_carry_out(VALUE_T v) { carry_values[vk_scan_flag(SCAN_SLOT_PARITY) ? 0u : 1u] = v; }

#endif  // VKPRIM_SCAN_IO_GLSL
