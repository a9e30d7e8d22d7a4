#version 460
// Histogram of bins that fit shared memory: each workgroup zeroes `replicas` copies of the histogram in shared
// memory, adds its share of the samples there with shared atomics (invocation i into copy i % replicas, so
// invocations that meet on one bin mostly meet on different copies, in different banks: Gómez-Luna et al.,
// "An optimized approach to histogram computation on GPU", 2013), then adds the sum of its copies into the
// histogram, one global atomic per nonzero bin, which the zero kernel cleared before this dispatch.
// Defines, specialization, bindings, push constants: common/histogram.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/histogram.glsl"

uint replica_base;

void vk_hist_add(uint word, uint count) { atomicAdd(hist_shared[replica_base + word], count); }

void main() {
  const uint group = vk_workgroup_index();
  const uint group_count = vk_hist_groups();
  if (group >= group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  for (uint i = tid; i < pc.replicas * pc.stride; i += WG_SIZE) hist_shared[i] = 0u;
  vk_hist_stage_levels();
  barrier();
  replica_base = (tid % pc.replicas) * pc.stride;
  vk_hist_samples(group, group_count, vk_hist_count());
  barrier();
  for (uint word = tid; word < pc.bins * CHANNELS; word += WG_SIZE) {
    uint sum = 0u;
    for (uint r = 0u; r < pc.replicas; ++r) sum += hist_shared[r * pc.stride + word];
    if (sum != 0u) atomicAdd(hist_counts[pc.out_offset + word], sum);
  }
}
