// vkprim/histogram.hpp — counts of samples per bin (CUB's DeviceHistogram): even bins over [lower, upper) or
// bins between levels, over 1 to 4 interleaved channels.
#pragma once

#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "vkprim/context.hpp"
#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

// The samples' type. u8 needs storageBuffer8BitAccess (feature_storage_8bit) and u16
// storageBuffer16BitAccess (feature_storage_16bit): the samples and levels are read as bytes and halves.
enum class HistogramSample { u8, u16, u32, i32, f32 };
const char* to_string(HistogramSample sample);
bool parse(const char* name, HistogramSample& out);
uint32_t size_of(HistogramSample sample);  // bytes per sample: 1, 2 or 4

// even:   `bins` equal bins over [lower, upper), the same for every channel.
//         Integer samples, exactly: bin = floor((s - lower) * bins / (upper - lower)) for lower <= s < upper.
//         f32 samples: bin = min(trunc(t), bins - 1) with t = (s - lower) * scale, the subtraction and the
//         product each rounded to nearest in single precision, and scale = (float)(bins / (upper - lower))
//         computed in double; counted where lower <= s < upper (so never NaN). Near an edge that rounding may
//         move a sample one bin from the exact quotient's; -0.0 counts as 0.0. Denormal samples and bounds
//         may be taken as zero on devices that flush denormals (shaderDenormFlushToZeroFloat32).
// levels: bins + 1 ascending levels, of the sample type, in a buffer given to record: bin i holds
//         levels[i] <= s < levels[i + 1] (shared by every channel; a sample below levels[0] or at or past
//         levels[bins] is dropped, and so is NaN). Equal adjacent levels make an empty bin. Levels that
//         descend somewhere, or NaN levels, give unspecified counts (never a write outside the histogram).
enum class HistogramBinning { even, levels };
const char* to_string(HistogramBinning binning);
bool parse(const char* name, HistogramBinning& out);

// privatized: each workgroup counts into copies of the histogram in shared memory (invocation i into copy
//             i % replicas(), which spreads the atomics on one bin over copies in different banks), then adds
//             its nonzero bins into the histogram with one global atomic each. For bins * channels that fit
//             the plan's shared-memory budget (replicas() says how many copies fit).
// global:     every run of equal bins an invocation meets goes straight to the histogram with a global atomic:
//             for bins * channels past that budget (65536 bins of one channel, say).
// automatic = privatized where it fits, else global. Both keep each invocation's current bin and its count in
// registers and add them only when the bin changes, so input dominated by one bin costs fewer atomics.
enum class HistogramAlgorithm { automatic, privatized, global };
const char* to_string(HistogramAlgorithm algorithm);
bool parse(const char* name, HistogramAlgorithm& out);

struct HistogramDesc {
  HistogramSample sample = HistogramSample::u8;
  uint32_t channels = 1;    // 1..4; pixel p's channel c is samples[p * channels + c] (CUB's MultiHistogram)
  uint32_t bins = 256;      // per channel, 1..65536
  HistogramBinning binning = HistogramBinning::even;
  // even: the range [lower, upper), lower < upper. Integer samples: whole numbers, lower a value of the type
  // and upper at most the type's largest value + 1 (u8 [0, 256) and u32 [0, 2^32) cover every sample).
  // f32: finite, each exactly a float. levels: both ignored.
  double lower = 0;
  double upper = 256;
  uint64_t max_count = 0;   // pixels, 1..2^40 (record_indirect: 1..2^32-1, within one binding below)
  HistogramAlgorithm algorithm = HistogramAlgorithm::automatic;
  // Benchmark overrides (types.hpp; 0 = the tuned default): workgroup_size (a power of two, 64..1024),
  // vectors_per_thread (16-byte vectors each invocation loads per step, 1..8), max_workgroups (the grid).
  Tuning tuning{};
};

namespace detail { struct HistogramPlan; }

// A plan: create once (builds every pipeline it needs), record many times, into many command buffers, from
// several threads. A record runs a small pass that clears the histogram, then the counting pass (a dispatch
// per storage-buffer window of samples); counts are exact (integer atomics: any order gives the same counts).
class Histogram {
 public:
  // invalid_argument: an unknown enum, channels outside 1..4, bins outside 1..65536, max_count 0 or past 2^40,
  // even bounds that are not lower < upper within the sample type (above), a tuning field out of range or one
  // the plan does not read. unsupported: u8 / u16 without 8- / 16-bit storage; privatized where the
  // histogram does not fit shared memory.
  static Result<Histogram> create(Context& context, const HistogramDesc& desc);
  Histogram(Histogram&&) noexcept;
  Histogram& operator=(Histogram&&) noexcept;
  ~Histogram();

  const HistogramDesc& desc() const;
  HistogramAlgorithm algorithm() const;  // the resolved algorithm (never automatic)
  // Copies of the histogram each workgroup keeps in shared memory (privatized), 0 for global.
  uint32_t replicas() const;
  // Samples one workgroup loads per step (workgroup size x vectors x 16 bytes / sample size).
  uint64_t samples_per_tile() const;
  // Dispatches record() issues for `count` pixels: the clear, then one per storage-buffer window (none for 0).
  uint32_t dispatch_count(uint64_t count) const;
  // Scratch for record and record_indirect (record_indirect's dispatch arguments; record leaves it untouched):
  // usage STORAGE_BUFFER | INDIRECT_BUFFER, alignment minStorageBufferOffsetAlignment (at least 16). Never 0.
  ScratchRequirements scratch_requirements() const;

  // histogram[c * bins + b] = the number of pixels p < count whose channel c falls in bin b: bins * channels
  // u32 counts, channel-major, OVERWRITTEN (a record never adds to what the buffer held). samples holds
  // count * channels samples (size_of(sample) bytes each, offset a multiple of that size); levels (binning
  // levels only, else BufferRange{}) holds bins + 1 samples; histogram's offset is a multiple of 4. count 0
  // writes zeros and reads no samples (samples may then be BufferRange{}).
  // Not in place: histogram must not overlap samples, levels or scratch, nor scratch samples or levels
  // (invalid_argument); samples and levels may overlap. Every range needs usage STORAGE_BUFFER.
  // Before: the caller makes the writes of samples and levels visible to compute-shader reads, and histogram
  // and scratch free of hazards. record places every barrier between its own passes and never submits or
  // waits. After: histogram is written by compute shaders; the caller adds a barrier (src COMPUTE_SHADER /
  // SHADER_WRITE) before consuming it. Clobbers the bound compute pipeline, descriptor set 0 and push
  // constants. On error nothing is recorded.
  Result<void> record(VkCommandBuffer cmd, const BufferRange& samples, const BufferRange& histogram, uint64_t count,
                      const BufferRange& scratch, const BufferRange& levels = {}) const;

  // As record, with the pixel count read on the GPU: a u32 at count_buffer (usage STORAGE_BUFFER, offset a
  // multiple of 4), clamped to max_count; the workgroup count is computed on the GPU and issued with
  // vkCmdDispatchIndirect, so no CPU read-back is needed. samples must hold max_count pixels (only count are
  // read). Before: the caller makes the count's write visible to compute-shader reads too. count_buffer must
  // not overlap histogram or scratch. unsupported: max_count * channels samples past one storage-buffer
  // binding (maxStorageBufferRange), or max_count past 2^32-1.
  Result<void> record_indirect(VkCommandBuffer cmd, const BufferRange& samples, const BufferRange& histogram,
                               const BufferRange& count_buffer, const BufferRange& scratch,
                               const BufferRange& levels = {}) const;

  // Without push descriptors (ContextOptions): returns the descriptor sets every record so far wrote to the
  // plan's pools. Call it once no pending command buffer holds a record of this plan.
  void release_descriptor_sets() const;

 private:
  explicit Histogram(std::unique_ptr<detail::HistogramPlan> plan);
  std::unique_ptr<detail::HistogramPlan> plan_;
};

}  // namespace vkprim
