// Histogram: per-workgroup copies of the histogram in shared memory (privatization with replication:
// Shams & Kennedy, "Efficient Histogram Algorithms for NVIDIA CUDA Compatible Devices", 2007; Gómez-Luna et
// al., "An optimized approach to histogram computation on GPU", 2013) or global atomics, over 16-byte vector
// loads with each invocation's current bin and count kept in registers (shaders/histogram,
// shaders/common/histogram.glsl). A record is a clear of the histogram, then the counting pass.
#include "vkprim/histogram.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "indirect.hpp"
#include "plan_common.hpp"
#include "shader_groups.hpp"

namespace vkprim {

const char* to_string(HistogramSample s) {
  switch (s) {
    case HistogramSample::u8: return "u8";
    case HistogramSample::u16: return "u16";
    case HistogramSample::u32: return "u32";
    case HistogramSample::i32: return "i32";
    case HistogramSample::f32: return "f32";
  }
  return "unknown";
}
bool parse(const char* name, HistogramSample& out) { return detail::parse_enum(name, HistogramSample::f32, out); }
uint32_t size_of(HistogramSample s) {
  return s == HistogramSample::u8 ? 1 : s == HistogramSample::u16 ? 2 : 4;
}

const char* to_string(HistogramBinning b) {
  switch (b) {
    case HistogramBinning::even: return "even";
    case HistogramBinning::levels: return "levels";
  }
  return "unknown";
}
bool parse(const char* name, HistogramBinning& out) { return detail::parse_enum(name, HistogramBinning::levels, out); }

const char* to_string(HistogramAlgorithm a) {
  switch (a) {
    case HistogramAlgorithm::automatic: return "automatic";
    case HistogramAlgorithm::privatized: return "privatized";
    case HistogramAlgorithm::global: return "global";
  }
  return "unknown";
}
bool parse(const char* name, HistogramAlgorithm& out) {
  return detail::parse_enum(name, HistogramAlgorithm::global, out);
}

namespace detail {

namespace {

constexpr KernelName kPrivatizedKernel = kernel_name("histogram/privatized");
constexpr KernelName kGlobalKernel = kernel_name("histogram/global");
constexpr KernelName kZeroKernel = kernel_name("histogram/zero");
// common/histogram.glsl's push constants (16 words) and bindings (samples, histogram, levels, indirect region).
static_assert(kPrivatizedKernel.push_bytes() == 64 && kGlobalKernel.push_bytes() == 64);
static_assert(kPrivatizedKernel.bindings() == 4 && kGlobalKernel.bindings() == 4);
static_assert(kZeroKernel.push_bytes() == 8 && kZeroKernel.bindings() == 1);

constexpr uint32_t kMaxBins = 65536;
constexpr uint32_t kMaxChannels = 4;
constexpr uint32_t kZeroWorkgroup = 256;
// BIN_MODE (common/histogram.glsl).
enum : uint32_t { kBinEven = 0, kBinLevelsShared = 1, kBinLevelsBuffer = 2, kBinEvenShift = 3 };
constexpr uint32_t kFlagIndirect = 1;  // HIST_INDIRECT
// The shared array is a specialization constant; sizes are rounded up to a multiple of this many words, so
// that plans of nearby bin counts share a pipeline.
constexpr uint32_t kSharedGranuleWords = 1024;

// Tuning as data: the first row whose driver matches (0: any) gives the workgroup, the 16-byte vectors
// each invocation loads per step by sample size (1, 2, 4 bytes), the shared memory a workgroup may take for
// its copies of the histogram (and staged levels), and the most copies (docs/PERFORMANCE.md, Histogram: the
// NVIDIA workgroup is measured, the rest not yet). On NVIDIA the budget keeps 4 workgroups of 512 resident per
// SM on Hopper (228 KiB each), so that the one-wave grid below is resident at once; copies past 8 only cost
// their clear and merge.
struct HistogramPolicy {
  VkDriverId driver;
  uint32_t workgroup_size;
  uint32_t vectors[3];
  uint32_t shared_bytes;
  uint32_t max_replicas;
};
constexpr HistogramPolicy kPolicies[] = {
    {VK_DRIVER_ID_NVIDIA_PROPRIETARY, 512, {2, 2, 4}, 24 * 1024, 8},
    {VK_DRIVER_ID_MESA_LLVMPIPE, 256, {1, 1, 2}, 16 * 1024, 4},
    {VkDriverId(0), 256, {2, 2, 4}, 16 * 1024, 8},
};

}  // namespace

struct HistogramPlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  HistogramDesc desc;
  HistogramAlgorithm algorithm = HistogramAlgorithm::privatized;
  uint32_t elem = 4;          // bytes per sample
  uint32_t vec = 4;           // samples per 16-byte vector
  uint32_t wg = 256;
  uint32_t vectors = 4;       // ITEMS
  uint32_t replicas = 0;      // privatized: copies per workgroup
  uint32_t stride = 0;        // privatized: words per copy
  uint32_t bin_mode = kBinEven;
  uint32_t shared_words = 1;  // SHARED_WORDS
  uint32_t shared_budget = 0; // words the policy and the device allow a workgroup
  uint64_t max_groups = 1;    // the grid's cap
  uint64_t window = 0;        // samples per binding window, a multiple of the channels
  std::array<uint32_t, 6> binning{};  // push words 10..15: flip, lower, span, m0, m1, m2
  const Kernel* counting = nullptr;
  const Kernel* zero = nullptr;
  const Kernel* args = nullptr;
  VkDeviceSize scratch_bytes = 16, scratch_align = 16;
  std::unique_ptr<DescriptorSets> descriptors;

  uint32_t words() const { return desc.bins * desc.channels; }
  uint64_t tile() const { return uint64_t(wg) * vectors * vec; }
  uint64_t groups_for(uint64_t samples) const {
    return std::min(std::max<uint64_t>(1, ceil_div(samples, tile())), max_groups);
  }
  uint64_t windows_for(uint64_t samples) const { return samples == 0 ? 0 : ceil_div(samples, window); }
};

namespace {

bool integer_sample(HistogramSample s) { return s != HistogramSample::f32; }

// The values an integer sample type holds: [lowest, largest].
void sample_limits(HistogramSample s, double& lowest, double& largest) {
  lowest = s == HistogramSample::i32 ? -2147483648.0 : 0.0;
  largest = s == HistogramSample::u8    ? 255.0
            : s == HistogramSample::u16 ? 65535.0
            : s == HistogramSample::i32 ? 2147483647.0
                                        : 4294967295.0;
}

// A bound as the caller wrote it, every digit kept (4294967297, not 4.29497e+09).
std::string bound(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", v);
  return text;
}

// f32 even bins: scale = (float)(bins / (upper - lower)) in double, as the header defines it.
float f32_scale(const HistogramDesc& d) { return float(double(d.bins) / (d.upper - d.lower)); }

// Even bounds: lower < upper within the sample type (integers: whole numbers, upper at most the largest value
// + 1; f32: finite floats with a normal scale, which a device that flushes denormals keeps as it is).
Result<void> check_even_bounds(const HistogramDesc& d) {
  if (!(d.lower < d.upper) || !std::isfinite(d.lower) || !std::isfinite(d.upper))
    return make_error(Status::invalid_argument, "Histogram::create: even bins need finite lower < upper; got [",
                      bound(d.lower), ", ", bound(d.upper), ")");
  if (integer_sample(d.sample)) {
    double lowest = 0, largest = 0;
    sample_limits(d.sample, lowest, largest);
    if (d.lower != std::floor(d.lower) || d.upper != std::floor(d.upper) || d.lower < lowest ||
        d.upper > largest + 1)
      return make_error(Status::invalid_argument, "Histogram::create: even bounds [", bound(d.lower), ", ",
                        bound(d.upper), ") must be whole numbers with ", bound(lowest), " <= lower < upper <= ",
                        bound(largest + 1), " for ", to_string(d.sample), " samples");
    return {};
  }
  if (double(float(d.lower)) != d.lower || double(float(d.upper)) != d.upper)
    return make_error(Status::invalid_argument, "Histogram::create: even bounds [", bound(d.lower), ", ",
                      bound(d.upper), ") must each be exactly a float for f32 samples");
  const float scale = f32_scale(d);
  if (!std::isnormal(scale))
    return make_error(Status::invalid_argument, "Histogram::create: bins / (upper - lower) = ",
                      double(d.bins) / (d.upper - d.lower), " is not a normal float for f32 samples");
  return {};
}

// Every check of the description: enums, shape, count, bounds, tuning, then the device's features.
Result<void> check_histogram_desc(const ContextImpl& c, const HistogramDesc& d) {
  if (int(d.sample) < 0 || int(d.sample) > int(HistogramSample::f32))
    return make_error(Status::invalid_argument, "Histogram::create: unknown sample type ", int(d.sample));
  if (int(d.binning) < 0 || int(d.binning) > int(HistogramBinning::levels))
    return make_error(Status::invalid_argument, "Histogram::create: unknown binning ", int(d.binning));
  if (int(d.algorithm) < 0 || int(d.algorithm) > int(HistogramAlgorithm::global))
    return make_error(Status::invalid_argument, "Histogram::create: unknown algorithm ", int(d.algorithm));
  if (d.channels < 1 || d.channels > kMaxChannels)
    return make_error(Status::invalid_argument, "Histogram::create: channels ", d.channels, " must be in 1..4");
  if (d.bins < 1 || d.bins > kMaxBins)
    return make_error(Status::invalid_argument, "Histogram::create: bins ", d.bins, " must be in 1..65536");
  if (d.max_count == 0 || d.max_count > kMaxCount)
    return make_error(Status::invalid_argument, "Histogram::create: max_count ", d.max_count,
                      " must be in 1..2^40 pixels");
  if (d.binning == HistogramBinning::even)
    if (auto ok = check_even_bounds(d); !ok) return ok;
  if (auto ok = check_tuning("Histogram::create", d.tuning,
                             tune_workgroup_size | tune_vectors_per_thread | tune_max_workgroups);
      !ok)
    return ok;
  const uint32_t wg = d.tuning.workgroup_size;
  if (wg && (wg < 64 || wg > 1024 || (wg & (wg - 1)) != 0))
    return make_error(Status::invalid_argument, "Histogram::create: tuning.workgroup_size ", wg,
                      " must be a power of two from 64 to 1024");
  if (d.tuning.vectors_per_thread > 8)
    return make_error(Status::invalid_argument, "Histogram::create: tuning.vectors_per_thread ",
                      d.tuning.vectors_per_thread, " exceeds 8");
  if (d.sample == HistogramSample::u8 && !c.caps.has(feature_storage_8bit))
    return make_error(Status::unsupported, "Histogram::create: u8 samples need storageBuffer8BitAccess ",
                      "(feature_storage_8bit), which the device lacks or the caller did not enable");
  if (d.sample == HistogramSample::u16 && !c.caps.has(feature_storage_16bit))
    return make_error(Status::unsupported, "Histogram::create: u16 samples need storageBuffer16BitAccess ",
                      "(feature_storage_16bit), which the device lacks or the caller did not enable");
  return {};
}

// ceil(2^64 * bins / range) as {M0, M1, M2} (M = M0 + 2^32 M1 + 2^64 M2), by long division in base 2^32:
// range <= 2^32, so every partial remainder shifted by 32 bits fits 64.
std::array<uint32_t, 3> even_multiplier(uint64_t bins, uint64_t range) {
  const uint64_t digits[3] = {bins, 0, 0};  // bins * 2^64, most significant first
  uint64_t quotient[3] = {};
  uint64_t rem = 0;
  for (int i = 0; i < 3; ++i) {
    const uint64_t cur = (rem << 32) | digits[i];
    quotient[i] = cur / range;
    rem = cur % range;
  }
  std::array<uint32_t, 3> m = {uint32_t(quotient[2]), uint32_t(quotient[1]), uint32_t(quotient[0])};
  if (rem != 0 && ++m[0] == 0 && ++m[1] == 0) ++m[2];
  return m;
}

// Even bins of integer samples 2^s wide (s < 32): the bin is (key - lower) >> s (BIN_EVEN_SHIFT); else -1.
int even_bin_shift(const HistogramDesc& d) {
  if (d.binning != HistogramBinning::even || !integer_sample(d.sample)) return -1;
  const uint64_t range = uint64_t(d.upper - d.lower);
  if (range % d.bins != 0) return -1;
  const uint64_t width = range / d.bins;
  if ((width & (width - 1)) != 0 || width >= (uint64_t(1) << 32)) return -1;
  int s = 0;
  while ((uint64_t(1) << s) < width) ++s;
  return s;
}

// Push words 10..15 of the counting pass (common/histogram.glsl): flip, lower, span, m0, m1, m2 (BIN_EVEN_SHIFT:
// m0 the shift).
std::array<uint32_t, 6> binning_constants(const HistogramDesc& d) {
  std::array<uint32_t, 6> w{};
  if (d.binning != HistogramBinning::even) {
    w[0] = d.sample == HistogramSample::i32 ? 0x80000000u : 0u;
    return w;
  }
  if (!integer_sample(d.sample)) {
    const float lower = float(d.lower), upper = float(d.upper), scale = f32_scale(d);
    std::memcpy(&w[1], &lower, 4);
    std::memcpy(&w[2], &upper, 4);
    std::memcpy(&w[3], &scale, 4);
    return w;
  }
  const bool i32 = d.sample == HistogramSample::i32;
  const uint64_t range = uint64_t(d.upper - d.lower);  // 1..2^32, exact in double
  w[0] = i32 ? 0x80000000u : 0u;
  w[1] = (i32 ? uint32_t(int32_t(d.lower)) : uint32_t(d.lower)) ^ w[0];
  w[2] = uint32_t(range - 1);
  if (const int shift = even_bin_shift(d); shift >= 0) {
    w[3] = uint32_t(shift);
    return w;
  }
  const std::array<uint32_t, 3> m = even_multiplier(d.bins, range);
  std::copy(m.begin(), m.end(), w.begin() + 3);
  return w;
}

// The grid's cap: one wave of resident workgroups where the driver reports its compute units (each group then
// loops over an equal share), 2048 otherwise, 64 on CPU drivers (a workgroup per core); as Reduce's grid_stride.
uint64_t grid_cap(const ContextImpl& c, const HistogramDesc& d, uint32_t wg) {
  if (d.tuning.max_workgroups) return d.tuning.max_workgroups;
  if (c.caps.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU) return 64;
  if (c.caps.compute_units && c.caps.threads_per_compute_unit >= wg)
    return uint64_t(c.caps.compute_units) * (c.caps.threads_per_compute_unit / wg);
  return 2048;
}

// Where the counts and levels live: privatized copies (as many as the budget holds, up to the policy's
// most) with the levels staged after them where they fit too, else global atomics with the levels staged
// where they fit alone. shared_words rounds up to kSharedGranuleWords within the budget.
void resolve_shared_layout(const HistogramPolicy& policy, const ContextImpl& c, HistogramPlan& p) {
  const HistogramDesc& d = p.desc;
  const uint32_t budget = std::min(policy.shared_bytes, c.caps.max_shared_memory) / 4;
  p.shared_budget = budget;
  const uint32_t levels = d.binning == HistogramBinning::levels ? d.bins + 1 : 0;
  const uint32_t stride = p.words() + 1;
  const bool fits = stride <= budget;
  p.algorithm = d.algorithm != HistogramAlgorithm::automatic ? d.algorithm
                : fits                                       ? HistogramAlgorithm::privatized
                                                             : HistogramAlgorithm::global;
  uint32_t words = 1;
  bool staged = false;
  if (p.algorithm == HistogramAlgorithm::privatized && fits) {
    staged = levels > 0 && stride + levels <= budget;
    p.stride = stride;
    p.replicas = std::clamp((budget - (staged ? levels : 0)) / stride, 1u, policy.max_replicas);
    words = p.replicas * stride + (staged ? levels : 0);
  } else if (p.algorithm == HistogramAlgorithm::global) {
    staged = levels > 0 && levels <= budget;
    words = std::max(1u, staged ? levels : 0);
  }
  p.bin_mode = levels != 0               ? (staged ? kBinLevelsShared : kBinLevelsBuffer)
               : even_bin_shift(d) >= 0 ? kBinEvenShift
                                        : kBinEven;
  const uint32_t rounded = uint32_t(ceil_div(words, kSharedGranuleWords) * kSharedGranuleWords);
  p.shared_words = words == 1 ? 1 : std::max(words, std::min(budget, rounded));
}

// The plan's algorithm, tile, grid, shared layout and binding constants (desc checked).
std::unique_ptr<HistogramPlan> resolve_histogram_policy(ContextImpl& c, const HistogramDesc& d) {
  const HistogramPolicy& policy = policy_row(kPolicies, c.caps.driver_id);
  auto plan = std::make_unique<HistogramPlan>();
  plan->context = &c;
  plan->desc = d;
  plan->elem = size_of(d.sample);
  plan->vec = 16 / plan->elem;
  plan->wg = d.tuning.workgroup_size ? d.tuning.workgroup_size : policy.workgroup_size;
  plan->vectors = d.tuning.vectors_per_thread ? d.tuning.vectors_per_thread
                                               : policy.vectors[plan->elem == 1 ? 0 : plan->elem == 2 ? 1 : 2];
  plan->max_groups = grid_cap(c, d, plan->wg);
  resolve_shared_layout(policy, c, *plan);
  plan->binning = binning_constants(d);
  // A window starts on a whole pixel and a whole vector.
  plan->window = window_elements(c, plan->elem, std::lcm<uint64_t>(plan->vec, d.channels));
  return plan;
}

// The resolved plan against the device: privatized only where one copy fits, the grid within the dispatch
// limits.
Result<void> check_histogram_limits(const ContextImpl& c, const HistogramPlan& p) {
  if (p.algorithm == HistogramAlgorithm::privatized && p.replicas == 0)
    return make_error(Status::unsupported, "Histogram::create: privatized needs ", (p.words() + 1) * 4,
                      " bytes of shared memory for one copy of ", p.desc.bins, " bins x ", p.desc.channels,
                      " channels; the plan's budget is ", p.shared_budget * 4, " (use global or automatic)");
  if (auto fits = split_groups(c, p.max_groups); !fits)
    return make_error(Status::unsupported, "Histogram::create: ", p.max_groups, " workgroups exceed the device's ",
                      "dispatch limits (", fits.error().message, ")");
  return {};
}

// The counting kernel, the clear and record_indirect's args kernel; the first failure is returned.
Result<void> build_histogram_kernels(ContextImpl& c, HistogramPlan& p) {
  const HistogramSample s = p.desc.sample;
  KernelDesc kd{p.algorithm == HistogramAlgorithm::privatized ? kPrivatizedKernel : kGlobalKernel};
  kd.plan = "Histogram";
  kd.group = &kShaderGroup_histogram;
  kd.variant = s == HistogramSample::i32 ? "u32" : to_string(s);  // i32 counts as u32 through the flip
  kd.workgroup_size = p.wg;
  kd.items = p.vectors;
  kd.spec.channels = p.desc.channels;
  kd.spec.bin_mode = p.bin_mode;
  kd.spec.shared_words = p.shared_words;
  // Every access is in bounds by construction: samples below the dispatch's count (the GPU count clamped to
  // max_count, which the binding holds), bins below bins (the even formula's bound, the clamp of f32's, the
  // search's interval), levels up to bins; so the driver's bounds checks can go (feature_pipeline_robustness).
  kd.unchecked_storage = true;
  auto counting = get_kernel(c, kd);
  if (!counting) return std::move(counting).error();
  p.counting = counting.value();
  KernelDesc zd{kZeroKernel};
  zd.plan = "Histogram";
  zd.group = &kShaderGroup_histogram;
  zd.variant = "default";
  zd.workgroup_size = kZeroWorkgroup;
  auto zero = get_kernel(c, zd);
  if (!zero) return std::move(zero).error();
  p.zero = zero.value();
  auto args = indirect_args_kernel(c, "Histogram");
  if (!args) return std::move(args).error();
  p.args = args.value();
  return {};
}

}  // namespace
}  // namespace detail

using detail::make_error;

Histogram::Histogram(std::unique_ptr<detail::HistogramPlan> plan) : plan_(std::move(plan)) {}
Histogram::Histogram(Histogram&&) noexcept = default;
Histogram& Histogram::operator=(Histogram&&) noexcept = default;
Histogram::~Histogram() = default;

// Validate the description, resolve the policy, check it against the device, build the kernels, lay out
// scratch (record_indirect's args region alone); the checks fire in that order.
Result<Histogram> Histogram::create(Context& context, const HistogramDesc& desc) {
  detail::ContextImpl& c = context.impl();
  if (auto ok = detail::check_histogram_desc(c, desc); !ok) return ok.error();
  std::unique_ptr<detail::HistogramPlan> plan = detail::resolve_histogram_policy(c, desc);
  if (auto ok = detail::check_histogram_limits(c, *plan); !ok) return ok.error();
  if (auto ok = detail::build_histogram_kernels(c, *plan); !ok) return ok.error();
  plan->scratch_align = detail::binding_alignment(c);
  plan->scratch_bytes = std::max<VkDeviceSize>(plan->scratch_align, detail::kIndirectRegionBytes);
  plan->descriptors = std::make_unique<detail::DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return Histogram(std::move(plan));
}

const HistogramDesc& Histogram::desc() const { return plan_->desc; }
HistogramAlgorithm Histogram::algorithm() const { return plan_->algorithm; }
uint32_t Histogram::replicas() const { return plan_->replicas; }
uint64_t Histogram::samples_per_tile() const { return plan_->tile(); }
uint32_t Histogram::dispatch_count(uint64_t count) const {
  return 1 + uint32_t(plan_->windows_for(count * plan_->desc.channels));
}
ScratchRequirements Histogram::scratch_requirements() const {
  return {plan_->scratch_bytes, plan_->scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}
void Histogram::release_descriptor_sets() const { plan_->descriptors->release(); }

namespace detail {
namespace {

struct Operands {
  BufferRange samples, histogram, scratch, levels;
  const BufferRange* count_buffer = nullptr;  // record_indirect
};

// Every buffer check of record (n = count) and record_indirect (n = max_count, the most it may read).
Result<void> check_operands(const HistogramPlan& p, const char* call, const Operands& o, uint64_t n) {
  const VkDeviceSize sample_bytes = n * p.desc.channels * p.elem, count_bytes = VkDeviceSize(p.words()) * 4;
  const bool levels = p.desc.binning == HistogramBinning::levels;
  const VkDeviceSize level_bytes = levels ? VkDeviceSize(p.desc.bins + 1) * p.elem : 0;
  if (auto ok = check_range(o.samples, sample_bytes, p.elem, "samples", n > 0); !ok)
    return with_context(ok, "Histogram", call);
  if (auto ok = check_range(o.histogram, count_bytes, 4, "histogram", true); !ok)
    return with_context(ok, "Histogram", call);
  if (auto ok = check_range(o.levels, level_bytes, p.elem, "levels", levels); !ok)
    return with_context(ok, "Histogram", call);
  if (!levels && o.levels.buffer)
    return make_error(Status::invalid_argument, "Histogram::", call,
                      ": levels given to a plan of even bins (only HistogramBinning::levels reads them)");
  const ScratchRequirements need{p.scratch_bytes, p.scratch_align, 0};
  if (auto ok = check_scratch(o.scratch, need, "Histogram", call); !ok) return ok;
  struct Named {
    const char* what;
    BufferRange range;
    VkDeviceSize bytes;
  };
  const Named ranges[] = {{"histogram", o.histogram, count_bytes}, {"scratch", o.scratch, p.scratch_bytes},
                          {"samples", o.samples, sample_bytes}, {"levels", o.levels, level_bytes},
                          {"count_buffer", o.count_buffer ? *o.count_buffer : BufferRange{}, 4}};
  // The written ranges (histogram, scratch) against every other; samples and levels are only read.
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = i + 1; j < std::size(ranges); ++j) {
      const Named& a = ranges[i];
      const Named& b = ranges[j];
      if (!a.range.buffer || !b.range.buffer || b.bytes == 0 || !overlaps(a.range, a.bytes, b.range, b.bytes)) continue;
      return make_error(Status::invalid_argument, "Histogram::", call, ": ", a.what, " and ", b.what,
                        " ranges overlap");
    }
  return {};
}

// The clear of the histogram before the counting pass adds to it.
Pass zero_pass(const HistogramPlan& p, const BufferRange& histogram) {
  const ElementBinding out = bind_elements(*p.context, histogram, 0, p.words(), 4);
  Pass pass;
  pass.kernel = p.zero;
  pass.buffers[0] = out.bound;
  pass.push[0] = p.words();
  pass.push[1] = out.shift;
  pass.groups = ceil_div(p.words(), kZeroWorkgroup);
  pass.label = "vkprim histogram/zero";
  return pass;
}

// A counting pass over `samples` samples from sample `first`; binding 3 is the indirect region, or (record)
// the samples again (statically used, never read), as is binding 2 for even bins.
Pass counting_pass(const HistogramPlan& p, const Operands& o, uint64_t first, uint64_t samples,
                   const BoundBuffer* region) {
  ContextImpl& c = *p.context;
  const ElementBinding in = bind_elements(c, o.samples, first, samples, p.elem);
  const ElementBinding out = bind_elements(c, o.histogram, 0, p.words(), 4);
  const bool levels = p.desc.binning == HistogramBinning::levels;
  const ElementBinding lv = levels ? bind_elements(c, o.levels, 0, p.desc.bins + 1, p.elem) : in;
  const uint64_t groups = region ? p.max_groups : p.groups_for(samples);
  Pass pass;
  pass.kernel = p.counting;
  pass.buffers = {in.bound, out.bound, lv.bound, region ? *region : in.bound};
  const std::array<uint32_t, 10> head = {uint32_t(samples), in.shift, out.shift, levels ? lv.shift : 0u,
                                         uint32_t(groups), region ? kFlagIndirect : 0u, 0u, p.desc.bins,
                                         p.replicas, p.stride};
  std::copy(head.begin(), head.end(), pass.push.begin());
  std::copy(p.binning.begin(), p.binning.end(), pass.push.begin() + head.size());
  pass.groups = groups;
  if (region) {
    pass.indirect_entry = 0;
    pass.indirect_region = *region;
  }
  pass.label = std::string("vkprim ") + p.counting->desc.kernel.name() + (region ? " (indirect)" : "");
  return pass;
}

}  // namespace
}  // namespace detail

Result<void> Histogram::record(VkCommandBuffer cmd, const BufferRange& samples, const BufferRange& histogram,
                               uint64_t count, const BufferRange& scratch, const BufferRange& levels) const {
  const detail::HistogramPlan& p = *plan_;
  if (count > p.desc.max_count)
    return make_error(Status::invalid_argument, "Histogram::record: count ", count, " exceeds max_count ",
                      p.desc.max_count);
  const detail::Operands o{samples, histogram, scratch, levels};
  if (auto ok = detail::check_operands(p, "record", o, count); !ok) return ok;
  std::vector<detail::Pass> passes = {detail::zero_pass(p, histogram)};
  const uint64_t total = count * p.desc.channels;
  for (uint64_t first = 0; first < total; first += p.window) {
    passes.push_back(detail::counting_pass(p, o, first, std::min(p.window, total - first), nullptr));
    if (total > p.window) passes.back().label += " window " + std::to_string(first / p.window);
  }
  return detail::record_passes(*p.context, *p.descriptors, cmd, passes, "Histogram", "record");
}

Result<void> Histogram::record_indirect(VkCommandBuffer cmd, const BufferRange& samples,
                                        const BufferRange& histogram, const BufferRange& count_buffer,
                                        const BufferRange& scratch, const BufferRange& levels) const {
  const detail::HistogramPlan& p = *plan_;
  detail::ContextImpl& c = *p.context;
  const uint32_t channels = p.desc.channels;
  if (auto ok = detail::check_indirect_limits(c, p.desc.max_count, p.window / channels, p.max_groups, "Histogram");
      !ok)
    return ok;
  if (auto ok = detail::check_count_buffer(count_buffer, "Histogram::record_indirect"); !ok) return ok;
  const detail::Operands o{samples, histogram, scratch, levels, &count_buffer};
  if (auto ok = detail::check_operands(p, "record_indirect", o, p.desc.max_count); !ok) return ok;
  // Entry 0: the pixels of the count, at least one workgroup, at most the grid's cap.
  const uint32_t pixels_per_group = uint32_t(std::max<uint64_t>(1, p.tile() / channels));
  const std::vector<detail::IndirectEntry> entries = {{pixels_per_group, 1, uint32_t(p.max_groups), 0}};
  const detail::BoundBuffer region{scratch.buffer, scratch.offset, detail::kIndirectRegionBytes};
  std::vector<detail::Pass> passes;
  passes.push_back(detail::make_indirect_args_pass(c, p.args, count_buffer, region, p.desc.max_count, entries));
  passes.push_back(detail::zero_pass(p, histogram));
  passes.push_back(detail::counting_pass(p, o, 0, p.desc.max_count * channels, &region));
  return detail::record_passes(c, *p.descriptors, cmd, passes, "Histogram", "record_indirect");
}

}  // namespace vkprim
