#version 460
// Portable stream compaction, pass 3 of 3: each workgroup re-reads its tile, ranks the kept elements and
// writes them (common/select_tile.glsl) at its exclusive prefix (binding 2[tile - 1] after
// shaders/select/scan_counts.comp); Partition writes the rejected ones at total + tile start - prefix,
// the total being binding 2[tiles - 1], or with SELECT_REVERSED downwards from n - 1 - (tile start -
// prefix). The last tile writes selected_count.
// Defines: VKPRIM_TYPE_* (the predicate's type), VKPRIM_NO_SUBGROUPS.
// Specialization: WG_SIZE (power of two), ITEMS (1..8 vectors of 16 bytes per invocation).
// Bindings and push: common/select_io.glsl (binding 2: the inclusive prefixes of the tile counts).
#extension GL_GOOGLE_include_directive : require
#define VKPRIM_SELECT_REVERSIBLE 1
#include "common/config.glsl"
#include "common/select_io.glsl"
#include "common/workgroup_count_scan.glsl"
#include "common/select_tile.glsl"

void main() {
  const uint n = vk_select_count();
  const uint tiles = vk_select_tiles(n);
  const uint tile = vk_workgroup_index();
  if (tile >= tiles) return;
  uvec4 vectors[ITEMS];
  const uint keep = vk_select_load_tile(tile, n, vectors);
  uvec4 rank_in_row, row_total;
  const uint kept = vk_select_rank_rows(keep, rank_in_row, row_total);
  const uint tile_start = tile * TILE_ELEMENTS;
  const uint valid = min(n - min(n, tile_start), TILE_ELEMENTS);
  const uint prefix = tile > 0u ? scratch_words[tile - 1u] : 0u;
  const uint total = scratch_words[tiles - 1u];
  const bool reversed = vk_select_mode(SELECT_REVERSED);
  const uint rejected_to = !vk_select_mode(SELECT_PARTITION) ? REJECTED_DROPPED
                           : reversed                         ? REJECTED_TO_OUTPUT_REVERSED
                                                              : REJECTED_TO_OUTPUT;
  vk_select_write_tile(vectors, keep, rank_in_row, row_total, tile_start, valid, prefix,
                       reversed ? n - 1u - (tile_start - prefix) : total + tile_start - prefix, rejected_to);
  if (gl_LocalInvocationIndex == 0u && tile == tiles - 1u) vk_select_write_count(total);
}
