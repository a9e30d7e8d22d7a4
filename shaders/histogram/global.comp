#version 460
// Histogram of bins that do not fit shared memory: every run of samples goes straight to the histogram with a
// global atomic (the zero kernel cleared it before this dispatch). Levels are staged in shared memory where
// they fit (BIN_LEVELS_SHARED), else read from their buffer.
// Defines, specialization, bindings, push constants: common/histogram.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/histogram.glsl"

void vk_hist_add(uint word, uint count) { atomicAdd(hist_counts[pc.out_offset + word], count); }

void main() {
  const uint group = vk_workgroup_index();
  const uint group_count = vk_hist_groups();
  if (group >= group_count) return;
  if (BIN_MODE == BIN_LEVELS_SHARED) {
    vk_hist_stage_levels();
    barrier();
  }
  vk_hist_samples(group, group_count, vk_hist_count());
}
