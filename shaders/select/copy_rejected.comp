#version 460
// Chained Partition, pass 2: moves the rejected elements the chained pass (shaders/select/chained.comp)
// wrote in order to the spill (binding 2 from word pc.spill_word) behind the kept ones:
// output[k + i] = spill[i] for i < n - k, k being the total the last tile left in tile-state header word 4.
// Consecutive invocations copy consecutive elements (coalesced); workgroups past n - k return at once.
// Defines: VKPRIM_TYPE_U32 or VKPRIM_TYPE_U64 (elements of one or two u32 words; values are never
// interpreted). Specialization: WG_SIZE, ITEMS (elements per invocation / 4).
// Bindings and push: common/select_io.glsl.
#extension GL_GOOGLE_include_directive : require
#include "common/config.glsl"
#include "common/select_io.glsl"

#define STATE_TOTAL_WORD 4u

void main() {
  const uint n = vk_select_count();
  const uint per_group = WG_SIZE * ITEMS * 4u;
  const uint group = vk_workgroup_index();
  if (group >= n / per_group + (n % per_group != 0u ? 1u : 0u)) return;
  const uint k = scratch_words[STATE_TOTAL_WORD];
  const uint rejected = n - min(k, n);
  [[unroll]] for (uint j = 0u; j < ITEMS * 4u; ++j) {
    const uint i = group * per_group + j * WG_SIZE + gl_LocalInvocationIndex;
    if (i < rejected) {
      const uint w = pc.spill_word + i * ELEM_WORDS;
#if VEC_N == 4
      vk_select_store_output(k + i, scratch_words[w]);
#else
      vk_select_store_output(k + i, uvec2(scratch_words[w], scratch_words[w + 1u]));
#endif
    }
  }
}
