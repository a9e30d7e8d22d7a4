#version 460
// Indirect dispatch arguments computed on the GPU from the caller's element count (record_indirect).
// One invocation: reads the u32 count, clamps it to the plan's max_count and fills every entry of the
// region (layout in common/indirect.glsl). Entry k: n_k = the clamped count (source 0) or the workgroups
// of entry source-1 (the next level of a multi-level plan); g_k = clamp(ceil(n_k / per_group), min_groups,
// max_groups) (per_group 0: g_k = max_groups); the dispatch is g_k spilled into y past max_groups_x.
// No defines or specialization constants. Bindings: 0 = the caller's count buffer (u32 words),
// 1 = the region. Push: see ArgsConstants.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 1) in;

layout(push_constant) uniform ArgsConstants {
  uint count_word;     // index of the count within binding 0
  uint max_count;      // the plan's max_count (clamped to 2^32-1)
  uint max_groups_x;   // maxComputeWorkGroupCount[0]
  uint entries;        // 1..8
  uvec4 entry[6];      // per entry: per_group, min_groups, max_groups (0 = none), source
} pc;

layout(set = 0, binding = 0, std430) readonly buffer CountWords { uint count_words[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Region { uint region[]; };

void main() {
  const uint count = min(count_words[pc.count_word], pc.max_count);
  uint groups_of[6];
  for (uint k = 0u; k < pc.entries; ++k) {
    const uvec4 e = pc.entry[k];
    const uint n = e.w == 0u ? count : groups_of[e.w - 1u];
    uint groups = e.x == 0u ? e.z : (n / e.x + (n % e.x != 0u ? 1u : 0u));
    groups = max(groups, e.y);
    if (e.z != 0u) groups = min(groups, e.z);
    groups_of[k] = groups;
    const uint x = min(groups, pc.max_groups_x);
    const uint y = x == 0u ? 1u : (groups + x - 1u) / x;
    const uint base = k * 8u;
    region[base + 0u] = x;
    region[base + 1u] = y;
    region[base + 2u] = 1u;
    region[base + 3u] = n;
    region[base + 4u] = groups;
    region[base + 5u] = 0u;
    region[base + 6u] = 0u;
    region[base + 7u] = 0u;
  }
}
