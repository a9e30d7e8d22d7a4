// Specialization constants every kernel shares, and the linearized workgroup index.
//   constant_id 0 = WG_SIZE (also local_size_x), a power of two
//   constant_id 1 = ITEMS   (items, or 16-byte vectors, per thread; kernel-specific meaning)
// Each constant_id means one thing in every kernel (src/kernel_info.hpp, SpecId, is the runtime's copy):
//   2 LOOK_WINDOWS (scan/chained.comp), 3 KEY_FLAGS, 4 STAGE_ROUNDS (common/radix.glsl), 5 VK_OP
//   (common/types.glsl), 6 VALUE_UNITS, 7 SUBGROUP_MIN (common/radix.glsl), 8 PHASE, 9 MODE
//   (by_key/chained.comp), 10 REJECTED_ORDER (select/chained.comp), 11 CHANNELS, 12 BIN_MODE, 13 SHARED_WORDS
//   (common/histogram.glsl).
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

// Look-back steps of one tile (every trip of its look-back loop, over all its fallback rounds) after which
// the tile falls back on any predecessor it finds not ready, whatever the spin limit. llvmpipe gives all the
// loops of an invocation 65535 iterations together and then lets them fall through (docs/ALGORITHMS.md,
// "Loop budget"): the spin limit bounds the polls of one predecessor, this the polls of the whole tile, so
// that what a tile can spend is this plus a fixed cost per predecessor. A GPU's look-back takes a few steps.
#define LOOK_TRIP_LIMIT 4096u

#endif  // VKPRIM_CONFIG_GLSL
