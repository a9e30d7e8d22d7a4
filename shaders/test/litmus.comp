#version 460
#pragma use_vulkan_memory_model
// Message-passing litmus test of the chained scans' tile-state protocol (common/tile_state.glsl).
// Workgroups pair up on slots (slot order permuted by pc.seed): the writer stores a plain data word,
// publishes AGGREGATE a(slot) and then INCLUSIVE b(slot) with release; the reader polls the state with
// acquire up to pc.polls times. A reader may see NOT_READY, (AGGREGATE, a) or (INCLUSIVE, b) and, after
// INCLUSIVE, must see the data word: anything else (a torn value, a flag with the wrong value, stale
// data) counts as a violation. Results (binding 1, u32): [0] violations, [1] saw aggregate,
// [2] saw inclusive, [3] reads that found nothing published.
// Defines: VKPRIM_TYPE_U32 or VKPRIM_TYPE_U64 (value width), VKPRIM_STATE64.
// Specialization: WG_SIZE (only invocation 0 works). Push: slots, seed, polls.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#include "common/config.glsl"
// This test passes a plain data word through the state, so it needs acquire / release.
#define STATE_READ_SEMANTICS gl_SemanticsAcquire
#define STATE_PUBLISH_SEMANTICS gl_SemanticsRelease
#include "common/tile_state.glsl"

layout(push_constant) uniform Constants { uint slots; uint seed; uint polls; } pc;
layout(set = 0, binding = 0, std430) coherent buffer Data { uint data[]; };  // coherent: non-private, so the release covers it
layout(set = 0, binding = 1, std430) buffer Results { uint results[]; };

VALUE_T value_of(uint slot, uint flag) {
  const uint h = (slot * 0x9E3779B1u) ^ (flag * 0x85EBCA77u) ^ 0x5A5A5A5Au;
#if defined(VKPRIM_INT64)
  return (uint64_t(h * 0xC2B2AE3Du | 1u) << 32) | uint64_t(h);
#else
  return h | 0x00010001u;  // both 16-bit halves non-zero
#endif
}

void main() {
  if (gl_LocalInvocationIndex != 0u) return;
  const uint g = vk_workgroup_index();
  if (g >= 2u * pc.slots) return;
  const uint slot = ((g >> 1u) * 2654435761u + pc.seed) % pc.slots;
  const bool writer = ((g ^ pc.seed) & 1u) == 0u;
  if (writer) {
    vk_state_publish(slot, STATE_AGGREGATE, value_of(slot, STATE_AGGREGATE));
    data[slot] = slot ^ 0xA5A5A5A5u;
    vk_state_publish(slot, STATE_INCLUSIVE, value_of(slot, STATE_INCLUSIVE));
    return;
  }
  for (uint i = 0u; i < pc.polls; ++i) {
    VALUE_T v;
    const uint flag = vk_state_read(slot, v);
    if (flag == STATE_NOT_READY) {
      atomicAdd(results[3], 1u);
      continue;
    }
    bool ok = flag <= STATE_INCLUSIVE && v == value_of(slot, flag);
    if (flag == STATE_AGGREGATE) atomicAdd(results[1], 1u);
    if (flag == STATE_INCLUSIVE) {
      atomicAdd(results[2], 1u);
      ok = ok && data[slot] == (slot ^ 0xA5A5A5A5u);
    }
    if (!ok) atomicAdd(results[0], 1u);
    if (flag == STATE_INCLUSIVE) break;
  }
}
