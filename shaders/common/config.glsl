// Specialization constants every kernel shares, and the linearized workgroup index.
//   constant_id 0 = WG_SIZE (also local_size_x), a power of two
//   constant_id 1 = ITEMS   (items, or 16-byte vectors, per thread; kernel-specific meaning)
// Workgroup counts above maxComputeWorkGroupCount[0] are spilled into y and z by the runtime; the kernel
// sees one linear index and skips groups past the push-constant group count.
#ifndef VKPRIM_CONFIG_GLSL
#define VKPRIM_CONFIG_GLSL

#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG_SIZE = 256;
layout(constant_id = 1) const uint ITEMS = 1;

uint vk_workgroup_index() {
  return gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
}

// Bit 30 of the chained kernels' knob word (chained scan, chained select, onesweep): the tile index is the
// workgroup index instead of a ticket (ContextOptions::tile_order; the fallback keeps it hang-free).
#define KNOB_LAUNCH_ORDER 0x40000000u

// Look-back trips (chained scan and chained select: of one call of the loop; onesweep: of the tile's whole
// look-back) after which a blocked look-back falls back on the predecessor it waits for, whatever the spin
// limit. llvmpipe ends every loop after 65535 iterations with its state undefined; the spin limit bounds
// the polls of one predecessor, this a walk past many slow ones. A GPU's look-back takes a few trips.
#define LOOK_TRIP_LIMIT 16384u

#endif  // VKPRIM_CONFIG_GLSL
