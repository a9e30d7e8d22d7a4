#version 460
// Portable stream compaction, pass 1 of 3 (where the Vulkan memory model is not enabled): each workgroup
// counts the kept elements of its tile (common/select_tile.glsl) and writes the count to binding 2[tile].
// Then shaders/select/scan_counts.comp turns the counts into inclusive prefixes and
// shaders/select/scatter.comp writes the tiles.
// Defines: VKPRIM_TYPE_* (the predicate's type), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (power of two), ITEMS (1..8 vectors of 16 bytes per invocation).
// Bindings and push: common/select_io.glsl (binding 2: the tile counts).
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/select_io.glsl"
#include "common/workgroup_count_scan.glsl"
#include "common/select_tile.glsl"

void main() {
  const uint n = vk_select_count();
  const uint tile = vk_workgroup_index();
  if (tile >= vk_select_tiles(n)) return;
  const uint kept = vk_select_count_tile(tile, n);
  if (gl_LocalInvocationIndex == 0u) scratch_words[tile] = kept;
}
