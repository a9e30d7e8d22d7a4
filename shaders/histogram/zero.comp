#version 460
// Clears the histogram before the privatized or global kernel adds to it with atomics: `words` u32 words from
// word `offset` of binding 0, one per invocation. A compute pass rather than vkCmdFillBuffer, so that the
// histogram is written by compute shaders only (the synchronization contract of include/vkprim/histogram.hpp).
// No defines. Specialization: WG_SIZE.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG_SIZE = 256u;

layout(push_constant) uniform ZeroConstants {
  uint words;
  uint offset;
} pc;

layout(set = 0, binding = 0, std430) writeonly buffer HistogramCounts { uint hist_counts[]; };

void main() {
  const uint i = gl_WorkGroupID.x * WG_SIZE + gl_LocalInvocationIndex;
  if (i < pc.words) hist_counts[pc.offset + i] = 0u;
}
