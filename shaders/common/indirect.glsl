// GPU-driven counts (record_indirect): shaders/indirect/args.comp reads the caller's element count on the
// GPU and writes, per entry k of a plan (at most 6), 8 words into a scratch region:
//   {dispatch x, y, z (vkCmdDispatchIndirect reads these), element count n_k, workgroups needed g_k, 0, 0, 0}
// A kernel recorded indirectly takes its element count and workgroup count from its entry instead of its
// push constants, and skips linear workgroup indices >= g_k (y/z spill rounds the dispatch up).
// Define VKPRIM_INDIRECT_BINDING (the binding of the region) before including this file.
#ifndef VKPRIM_INDIRECT_GLSL
#define VKPRIM_INDIRECT_GLSL

#ifndef VKPRIM_INDIRECT_BINDING
#error "define VKPRIM_INDIRECT_BINDING before including common/indirect.glsl"
#endif

#define VKPRIM_INDIRECT_ENTRY_WORDS 8u

// VKPRIM_INDIRECT_WRITER: a kernel that also writes dispatch arguments there (segmented_sort/classify.comp).
#if defined(VKPRIM_INDIRECT_WRITER)
layout(set = 0, binding = VKPRIM_INDIRECT_BINDING, std430) buffer IndirectEntries {
#else
layout(set = 0, binding = VKPRIM_INDIRECT_BINDING, std430) readonly buffer IndirectEntries {
#endif
  uint vk_indirect_words[];
};

uint vk_indirect_count(uint entry) { return vk_indirect_words[entry * VKPRIM_INDIRECT_ENTRY_WORDS + 3u]; }
uint vk_indirect_groups(uint entry) { return vk_indirect_words[entry * VKPRIM_INDIRECT_ENTRY_WORDS + 4u]; }

#endif  // VKPRIM_INDIRECT_GLSL
