// The histogram kernels' shared code (shaders/histogram/privatized.comp and global.comp, src/histogram.cpp):
// bindings, push constants, the bin of a sample, and the grid-stride loop over the samples.
//
// Each invocation keeps a run (bin word, count) in registers per channel slot and hands it to the kernel's
// vk_hist_add only when the next sample of that slot falls in another bin: with 90% of the samples in one
// bin that is about 0.2 atomics per sample instead of one, and uniform samples pay one compare per sample.
// No subgroup operation is used, so the kernels need no subgroup variant and hold at any subgroup size,
// full or partial.
//
// Defines: VKPRIM_TYPE_U8 / U16 / U32 / F32, the samples' storage (i32 runs as U32 with pc.flip
// 0x80000000, which orders its bits as unsigned). Specialization: WG_SIZE, ITEMS (16-byte vectors per
// invocation per step, all loaded before any is binned), CHANNELS (1..4), BIN_MODE (below), SHARED_WORDS
// (the shared array: the privatized kernel's replicas, then the levels where BIN_MODE says so).
// Bindings: 0 samples (vectors, and elements for the head and tail), 1 the histogram (u32 counts,
// channel-major: channel c's bin b at word c * bins + b), 2 levels (bins + 1 elements of the sample type),
// 3 the record_indirect region (common/indirect.glsl).
#ifndef VKPRIM_HISTOGRAM_GLSL
#define VKPRIM_HISTOGRAM_GLSL

#define VKPRIM_INDIRECT_BINDING 3
#include "common/config.glsl"
#include "common/indirect.glsl"

layout(constant_id = 11) const uint CHANNELS = 1u;
layout(constant_id = 12) const uint BIN_MODE = 0u;
layout(constant_id = 13) const uint SHARED_WORDS = 1u;

// BIN_MODE: even bins, or the bin between levels held in shared memory or read from binding 2; or even bins
// 2^m0 wide of integer samples (BIN_EVEN_SHIFT: the bin is a shift, no multiply).
#define BIN_EVEN 0u
#define BIN_LEVELS_SHARED 1u
#define BIN_LEVELS_BUFFER 2u
#define BIN_EVEN_SHIFT 3u

// A sample outside [lower, upper) or the levels, and NaN: counted nowhere.
#define NO_BIN 0xFFFFFFFFu

#if defined(VKPRIM_TYPE_U8)
#extension GL_EXT_shader_8bit_storage : require
#define SAMPLE_STORE_T uint8_t
#define VEC_N 16u
#elif defined(VKPRIM_TYPE_U16)
#extension GL_EXT_shader_16bit_storage : require
#define SAMPLE_STORE_T uint16_t
#define VEC_N 8u
#elif defined(VKPRIM_TYPE_U32) || defined(VKPRIM_TYPE_F32)
#define SAMPLE_STORE_T uint
#define VEC_N 4u
#else
#error "define one of VKPRIM_TYPE_U8, U16, U32, F32"
#endif

layout(push_constant) uniform HistogramConstants {
  uint count;          // samples of this dispatch (record_indirect: the entry's pixels times CHANNELS)
  uint in_offset;      // element index of the first sample within binding 0 (the window's first pixel: a
                       // whole number of pixels from the caller's first, so channel = (e - in_offset) % CHANNELS)
  uint out_offset;     // word index of channel 0's bin 0 within binding 1
  uint levels_offset;  // element index of levels[0] within binding 2
  uint group_count;    // workgroups of this dispatch (linearized across x, y, z)
  uint flags;          // HIST_INDIRECT
  uint entry;          // record_indirect entry
  uint bins;           // per channel
  uint replicas;       // privatized: histogram copies in shared memory, invocation i adding to copy i % replicas
                       // (0 in the global kernel)
  uint stride;         // privatized: words per copy, bins * CHANNELS + 1: the pad word puts the copies of one
                       // bin in different banks
  uint flip;           // xor on every integer sample and level: 0x80000000 for i32, else 0
  uint lower;          // even: integers: lower ^ flip; f32: lower's bits
  uint span;           // even: integers: upper - lower - 1; f32: upper's bits
  uint m0, m1, m2;     // even: integers: M = ceil(2^64 bins / (upper - lower)) as M0 + 2^32 M1 + 2^64 M2;
                       // f32: m0 = the bits of scale (src/histogram.cpp, include/vkprim/histogram.hpp)
} pc;

#define HIST_INDIRECT 1u

layout(set = 0, binding = 0, std430) readonly buffer SampleVectors { uvec4 sample_vectors[]; };
layout(set = 0, binding = 0, std430) readonly buffer SampleValues { SAMPLE_STORE_T sample_values[]; };
layout(set = 0, binding = 1, std430) buffer HistogramCounts { uint hist_counts[]; };
layout(set = 0, binding = 2, std430) readonly buffer LevelValues { SAMPLE_STORE_T level_values[]; };

// The privatized kernel's replicas at [0, replicas * stride), then (BIN_LEVELS_SHARED) the levels as keys.
// Written only before a barrier() and read after one, or updated by atomics.
shared uint hist_shared[SHARED_WORDS];

uint vk_hist_count() { return (pc.flags & HIST_INDIRECT) != 0u ? vk_indirect_count(pc.entry) * CHANNELS : pc.count; }
uint vk_hist_groups() { return (pc.flags & HIST_INDIRECT) != 0u ? vk_indirect_groups(pc.entry) : pc.group_count; }

// Sample k (0..VEC_N-1) of a 16-byte vector, as stored.
uint vk_hist_lane(uvec4 v, uint k) {
  if (VEC_N == 16u) return bitfieldExtract(v[k / 4u], int(8u * (k % 4u)), 8);
  if (VEC_N == 8u) return bitfieldExtract(v[k / 2u], int(16u * (k % 2u)), 16);
  return v[k];
}

// A sample's key: the bits that order as the sample does (integers, unsigned), or the float's bits.
uint vk_hist_key(uint stored) {
#if defined(VKPRIM_TYPE_F32)
  return stored;
#else
  return stored ^ pc.flip;
#endif
}

// a <= b and a < b on keys.
bool vk_key_le(uint a, uint b) {
#if defined(VKPRIM_TYPE_F32)
  return uintBitsToFloat(a) <= uintBitsToFloat(b);
#else
  return a <= b;
#endif
}
bool vk_key_lt(uint a, uint b) {
#if defined(VKPRIM_TYPE_F32)
  return uintBitsToFloat(a) < uintBitsToFloat(b);
#else
  return a < b;
#endif
}

// Even bins. Integers: with d = key - lower (exact as u32 for any sample in range), the bin is
// floor(d * bins / range), range = upper - lower <= 2^32, computed exactly as floor(d * M / 2^64):
// M = ceil(2^64 bins / range) exceeds 2^64 bins / range by less than 1, so d * M / 2^64 exceeds
// d * bins / range by less than d / 2^64 < 2^-32, while d * bins / range lies at least 1 / range >= 2^-32
// below the next integer. The product's three words: d * M2 + the high word of d * M1 + (d * M0 >> 32).
// f32: t = (s - lower) * scale in IEEE single precision (precise: no contraction), the bin min(t, bins - 1)
// truncated; NaN fails the range test.
uint vk_hist_even_bin(uint key) {
#if defined(VKPRIM_TYPE_F32)
  const float s = uintBitsToFloat(key);
  const float lower = uintBitsToFloat(pc.lower);
  precise const float t = (s - lower) * uintBitsToFloat(pc.m0);
  const uint bin = uint(min(t, float(pc.bins - 1u)));
  return s >= lower && s < uintBitsToFloat(pc.span) ? bin : NO_BIN;
#else
  const uint d = key - pc.lower;  // wraps past span for keys below lower
  if (BIN_MODE == BIN_EVEN_SHIFT) return d <= pc.span ? d >> pc.m0 : NO_BIN;
  uint low_carry, unused;
  umulExtended(d, pc.m0, low_carry, unused);
  uint high, low;
  umulExtended(d, pc.m1, high, low);
  uint carry;
  uaddCarry(low, low_carry, carry);
  const uint bin = d * pc.m2 + high + carry;
  return d <= pc.span ? bin : NO_BIN;
#endif
}

// Level i as a key: from shared memory, or from binding 2.
uint vk_hist_level(uint i) {
  if (BIN_MODE == BIN_LEVELS_SHARED) return hist_shared[pc.replicas * pc.stride + i];
  return vk_hist_key(uint(level_values[pc.levels_offset + i]));
}

// Levels held in shared memory: each workgroup copies them there before its first barrier().
void vk_hist_stage_levels() {
  if (BIN_MODE != BIN_LEVELS_SHARED) return;
  const uint base = pc.replicas * pc.stride;
  for (uint i = gl_LocalInvocationIndex; i <= pc.bins; i += WG_SIZE)
    hist_shared[base + i] = vk_hist_key(uint(level_values[pc.levels_offset + i]));
}

// The bounds of the levels, read once per invocation (vk_hist_samples, after the staging's barrier).
uint first_level, last_level;

// Levels: the largest i < bins with levels[i] <= key, for keys in [levels[0], levels[bins]). A binary search
// of ceil(log2 bins) steps; its 16 steps are unrolled, each taken only while the interval holds more than one
// bin (the same in every invocation), so no loop counts against a driver's loop budget.
uint vk_hist_levels_bin(uint key) {
  if (!vk_key_le(first_level, key) || !vk_key_lt(key, last_level)) return NO_BIN;
  uint lo = 0u, n = pc.bins;
  [[unroll]] for (uint step = 0u; step < 16u; ++step) {
    if (n > 1u) {
      const uint step_bins = n / 2u;
      if (vk_key_le(vk_hist_level(lo + step_bins), key)) lo += step_bins;
      n -= step_bins;
    }
  }
  return lo;
}

uint vk_hist_bin(uint stored) {
  const uint key = vk_hist_key(stored);
  return BIN_MODE == BIN_EVEN || BIN_MODE == BIN_EVEN_SHIFT ? vk_hist_even_bin(key) : vk_hist_levels_bin(key);
}

// Defined by each kernel: adds `count` samples to bin word `word` (channel * bins + bin).
void vk_hist_add(uint word, uint count);

// Channel slots: with CHANNELS dividing VEC_N, sample k of every vector has the channel of slot k % CHANNELS
// (slot_base[slot] = that channel's first word); with 3 channels one slot takes every sample.
const uint RUN_SLOTS = VEC_N % CHANNELS == 0u ? CHANNELS : 1u;
uint run_word[4];   // the run's bin word, NO_BIN for a run of dropped samples
uint run_count[4];
uint slot_base[4];

void vk_hist_take(uint slot, uint word) {
  if (word == run_word[slot]) {
    run_count[slot] += 1u;
  } else {
    if (run_word[slot] != NO_BIN) vk_hist_add(run_word[slot], run_count[slot]);
    run_word[slot] = word;
    run_count[slot] = 1u;
  }
}

// Element e of binding 0 alone (the head and tail around the vectors): slot 0, whatever its channel.
void vk_hist_element(uint e) {
  const uint bin = vk_hist_bin(uint(sample_values[e]));
  const uint base = ((e - pc.in_offset) % CHANNELS) * pc.bins;
  vk_hist_take(0u, bin == NO_BIN ? NO_BIN : base + bin);
}

// Vector v of binding 0 (elements v * VEC_N ..).
void vk_hist_vector(uvec4 vector, uint v) {
  [[unroll]] for (uint k = 0u; k < VEC_N; ++k) {
    const uint bin = vk_hist_bin(vk_hist_lane(vector, k));
    const uint slot = k % RUN_SLOTS;
    const uint base = RUN_SLOTS == CHANNELS ? slot_base[slot] : ((v * VEC_N + k - pc.in_offset) % CHANNELS) * pc.bins;
    vk_hist_take(slot, bin == NO_BIN ? NO_BIN : base + bin);
  }
}

// Every sample of this dispatch that workgroup `group` of `group_count` owns, added through vk_hist_add:
// the whole 16-byte vectors grid-stride (ITEMS loads in flight per step), the fewer than VEC_N elements
// before the first and after the last one by the first invocations of the grid. Then the runs left over.
void vk_hist_samples(uint group, uint group_count, uint count) {
  const uint tid = gl_LocalInvocationIndex;
  if (BIN_MODE == BIN_LEVELS_SHARED || BIN_MODE == BIN_LEVELS_BUFFER) {
    first_level = vk_hist_level(0u);
    last_level = vk_hist_level(pc.bins);
  }
  [[unroll]] for (uint slot = 0u; slot < 4u; ++slot) {
    run_word[slot] = NO_BIN;
    run_count[slot] = 0u;
    slot_base[slot] = ((slot + CHANNELS - pc.in_offset % CHANNELS) % CHANNELS) * pc.bins;
  }
  const uint end = pc.in_offset + count;
  const uint first_vector = (pc.in_offset + VEC_N - 1u) / VEC_N;
  const uint end_vector = max(end / VEC_N, first_vector);
  const uint head_end = min(first_vector * VEC_N, end);
  const uint tail_begin = max(end_vector * VEC_N, head_end);
  const uint lane = group * WG_SIZE + tid;
  if (lane < head_end - pc.in_offset) vk_hist_element(pc.in_offset + lane);
  if (lane < end - tail_begin) vk_hist_element(tail_begin + lane);

  const uint vectors = end_vector - first_vector;
  const uint tile = WG_SIZE * ITEMS;
  const uint grid_stride = group_count * tile;
  uint v = group * tile + tid;
  for (; v + (ITEMS - 1u) * WG_SIZE < vectors; v += grid_stride) {
    uvec4 loaded[ITEMS];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) loaded[k] = sample_vectors[first_vector + v + k * WG_SIZE];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) vk_hist_vector(loaded[k], first_vector + v + k * WG_SIZE);
  }
  for (; v < vectors; v += WG_SIZE) vk_hist_vector(sample_vectors[first_vector + v], first_vector + v);

  [[unroll]] for (uint slot = 0u; slot < RUN_SLOTS; ++slot)
    if (run_word[slot] != NO_BIN) vk_hist_add(run_word[slot], run_count[slot]);
}

#endif  // VKPRIM_HISTOGRAM_GLSL
