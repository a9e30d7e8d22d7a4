#version 460
// Histogram of bins that fit shared memory: each workgroup zeroes `replicas` copies of the histogram in shared
// memory, adds its share of the samples there with shared atomics (invocation i into copy i % replicas:
// Gómez-Luna et al., "An optimized approach to histogram computation on GPU", 2013), then adds the sum of its
// copies into the histogram, one global atomic per nonzero bin, which the zero kernel cleared before this
// dispatch. The copies are interleaved, word w of copy r at w * replicas + r: with 32 copies (and 32 banks)
// invocation i always hits bank i % 32, so a subgroup's atomics never wait on a bank conflict, whatever bins
// its samples fall in.
// Defines, specialization, bindings, push constants: common/histogram.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/histogram.glsl"

uint replica;

void vk_hist_add(uint word, uint count) { atomicAdd(hist_shared[word * pc.replicas + replica], count); }

void main() {
  const uint group = vk_workgroup_index();
  const uint group_count = vk_hist_groups();
  if (group >= group_count) return;
  const uint tid = gl_LocalInvocationIndex;
  for (uint i = tid; i < pc.replicas * pc.stride; i += WG_SIZE) hist_shared[i] = 0u;
  vk_hist_stage_levels();
  barrier();
  replica = tid % pc.replicas;
  vk_hist_samples(group, group_count, vk_hist_count());
  barrier();
  for (uint word = tid; word < pc.bins * CHANNELS; word += WG_SIZE) {
    // Each invocation starts at a different copy (word % replicas), so neighbours read different banks.
    uint sum = 0u, r = word % pc.replicas;
    for (uint j = 0u; j < pc.replicas; ++j) {
      sum += hist_shared[word * pc.replicas + r];
      r = r + 1u == pc.replicas ? 0u : r + 1u;
    }
    if (sum != 0u) atomicAdd(hist_counts[pc.out_offset + word], sum);
  }
}
