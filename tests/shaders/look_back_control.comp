#version 450
// Control for tests/test_subgroup_uniformity.cpp: a look_back with one branch on the lane (which the check
// must flag) and one on a ballot's result (which it must not).
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer States { uint look_in; uint states[]; };

uint look_back(uint look) {
  const uint lane = gl_SubgroupInvocationID;
  uint flag = 2u;
  if (lane <= look) flag = states[look - lane];
  const uvec4 ready = subgroupBallot(flag != 0u);
  uint first = 0u;
  if (subgroupBallotFindLSB(ready) > 3u) first = look;
  return first;
}

void main() {
  if (gl_SubgroupID == 0u) states[gl_SubgroupInvocationID] = look_back(look_in);
}
