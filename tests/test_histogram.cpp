// Histogram against the host reference (tools/support/host_histogram.hpp): every sample type with 1 to 4
// channels, even bins and levels, the privatized and the global kernel, bin edges and bounds, NaN, skewed
// input, record_indirect, storage-buffer windows, offsets, and every argument error. The histogram buffer
// is poisoned before each record: the counts must be overwritten, and no word around them touched.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "host_histogram.hpp"
#include "test_support.hpp"
#include "vkprim/histogram.hpp"

using namespace vkprim;

namespace {

constexpr HistogramSample kSamples[] = {HistogramSample::u8, HistogramSample::u16, HistogramSample::u32,
                                        HistogramSample::i32, HistogramSample::f32};

Histogram make_histogram(Context& context, const HistogramDesc& d) {
  auto plan = Histogram::create(context, d);
  INFO("Histogram::create(" << to_string(d.sample) << " x" << d.channels << ", " << d.bins << " bins "
                            << to_string(d.binning) << " [" << d.lower << ", " << d.upper << "), max_count "
                            << d.max_count << ", " << to_string(d.algorithm)
                            << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

HistogramDesc even(HistogramSample sample, uint32_t channels, uint32_t bins, double lower, double upper,
                   uint64_t max_count, HistogramAlgorithm algorithm = HistogramAlgorithm::automatic) {
  HistogramDesc d;
  d.sample = sample;
  d.channels = channels;
  d.bins = bins;
  d.lower = lower;
  d.upper = upper;
  d.max_count = max_count;
  d.algorithm = algorithm;
  return d;
}

HistogramDesc by_levels(HistogramSample sample, uint32_t channels, uint32_t bins, uint64_t max_count) {
  HistogramDesc d = even(sample, channels, bins, 0, 1, max_count);
  d.binning = HistogramBinning::levels;
  return d;
}

// One plan with its buffers: samples (max_count pixels, a shift and guards), the histogram (guard words on
// both sides), levels, scratch and a GPU count.
template <class T>
class HistogramRig {
 public:
  static constexpr uint64_t kGuard = 16;  // samples after the data, and words around the histogram

  HistogramRig(Device& dev, const HistogramDesc& d)
      : dev_(dev),
        plan_(make_histogram(dev.context(), d)),
        samples_(test::make_buffer(dev, (d.max_count * d.channels + 2 * kGuard) * sizeof(T) + 16)),
        counts_(test::make_buffer(dev, (uint64_t(d.bins) * d.channels + 2 * kGuard) * 4)),
        levels_(test::make_buffer(dev, (d.bins + 1 + kGuard) * sizeof(T) + 16)),
        scratch_(test::make_buffer(dev, plan_.scratch_requirements().size + 256)),
        count_(test::make_buffer(dev, 16)) {}

  const Histogram& plan() const { return plan_; }

  // Counts the first `count` pixels of `samples` (placed `shift` samples into their buffer, followed by
  // guards that would land in bin 0), into the poisoned histogram at word `out_shift`; with `gpu_count`
  // through record_indirect (the plan clamps it to max_count). Checks the counts against the host and that
  // no other word was written.
  bool check(const std::vector<T>& samples, uint64_t count, const std::vector<T>& levels = {}, uint64_t shift = 0,
             uint64_t out_shift = 0, const uint32_t* gpu_count = nullptr) {
    const HistogramDesc& d = plan_.desc();
    const uint64_t words = uint64_t(d.bins) * d.channels;
    const uint64_t n = gpu_count ? std::min<uint64_t>(*gpu_count, d.max_count) : count;
    INFO(to_string(d.sample) << " x" << d.channels << " " << d.bins << " bins " << to_string(d.binning) << " "
                             << to_string(plan_.algorithm()) << " (" << plan_.replicas() << " copies), count " << n
                             << (gpu_count ? " from the GPU" : "") << ", sample shift " << shift << ", word shift "
                             << out_shift);
    REQUIRE(samples.size() >= n * d.channels);
    const T guard = d.binning == HistogramBinning::levels ? levels[0] : T(d.lower);
    std::vector<T> staged(shift, guard);
    staged.insert(staged.end(), samples.begin(), samples.end());
    staged.insert(staged.end(), kGuard, guard);
    REQUIRE(staged.size() * sizeof(T) <= samples_.size());
    test::upload(dev_, samples_, staged);
    if (!levels.empty()) test::upload(dev_, levels_, levels);
    if (gpu_count) test::upload(dev_, count_, std::vector<uint32_t>{*gpu_count});
    test::poison(dev_, counts_);
    const BufferRange in = samples_.range(shift * sizeof(T), std::max<uint64_t>(samples.size(), 1) * sizeof(T));
    const BufferRange out = counts_.range(out_shift * 4, words * 4);
    const BufferRange lv = levels.empty() ? BufferRange{} : levels_.range(0, levels.size() * sizeof(T));
    const BufferRange scratch = scratch_.range(0, plan_.scratch_requirements().size);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      recorded = gpu_count ? plan_.record_indirect(cmd, in, out, count_.range(0, 4), scratch, lv)
                           : plan_.record(cmd, in, out, count, scratch, lv);
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto got = test::download<uint32_t>(dev_, counts_, counts_.size() / 4);
    const std::vector<uint32_t> expected = host::histogram(d, samples, n, levels);
    uint64_t wrong = 0, touched = 0;
    for (uint64_t w = 0; w < got.size(); ++w) {
      const bool inside = w >= out_shift && w < out_shift + words;
      if (inside && got[w] != expected[w - out_shift] && wrong++ < 5)
        UNSCOPED_INFO("channel " << (w - out_shift) / d.bins << " bin " << (w - out_shift) % d.bins << ": "
                                 << got[w] << ", expected " << expected[w - out_shift]);
      if (!inside && got[w] != test::kPoison) ++touched;
    }
    CHECK(wrong == 0);
    CHECK(touched == 0);
    return wrong == 0 && touched == 0;
  }

 private:
  Device& dev_;
  Histogram plan_;
  Buffer samples_, counts_, levels_, scratch_, count_;
};

// Bounds per sample type for the cases that do not test them: inside the type, with samples drawn from a
// wider range so that some fall below and above.
struct Bounds {
  double lower, upper, draw_lower, draw_upper;
};
Bounds bounds_of(HistogramSample s) {
  switch (s) {
    case HistogramSample::u8: return {10, 250, 0, 256};
    case HistogramSample::u16: return {100, 60000, 0, 65536};
    case HistogramSample::u32: return {1000, 4294966000.0, 0, 4294967296.0};
    case HistogramSample::i32: return {-1000, 3000, -1500, 3500};
    case HistogramSample::f32: return {-1, 3, -1.5, 3.5};
  }
  return {0, 1, 0, 1};
}

// Even bins over bounds_of(sample).
HistogramDesc typical(HistogramSample sample, uint32_t channels, uint32_t bins, uint64_t max_count,
                      HistogramAlgorithm algorithm = HistogramAlgorithm::automatic) {
  const Bounds b = bounds_of(sample);
  return even(sample, channels, bins, b.lower, b.upper, max_count, algorithm);
}

// Random samples of the type for a plan from bounds_of, NaNs and infinities sprinkled among floats.
template <class T>
std::vector<T> draw(HistogramSample s, uint64_t n, std::mt19937_64& rng, double hot_percent = 0) {
  const Bounds b = bounds_of(s);
  const T hot = host::uniform_sample<T>(b.lower, b.upper, rng);
  std::vector<T> v = host::histogram_samples<T>(n, b.draw_lower, b.draw_upper, hot_percent, hot, rng);
  if constexpr (std::is_floating_point_v<T>) {
    const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                          -std::numeric_limits<T>::infinity(), T(0), -T(0)};
    for (auto& x : v)
      if (rng() % 64 == 0) x = specials[rng() % 5];
  }
  return v;
}

bool supported(Device& dev, HistogramSample s) {
  const auto& caps = dev.context().capabilities();
  if (s == HistogramSample::u8 && !caps.has(feature_storage_8bit)) return false;
  if (s == HistogramSample::u16 && !caps.has(feature_storage_16bit)) return false;
  return true;
}

// `levels` ascending levels for `bins` bins of type T: uneven steps, some equal neighbours (empty bins).
template <class T>
std::vector<T> uneven_levels(HistogramSample s, uint32_t bins, std::mt19937_64& rng) {
  const Bounds b = bounds_of(s);
  std::vector<T> v(bins + 1);
  for (auto& x : v) x = host::uniform_sample<T>(b.lower, b.upper, rng);
  std::sort(v.begin(), v.end());
  if (bins >= 4) v[2] = v[1];
  return v;
}

}  // namespace

TEST_CASE("histogram of u32 even bins at counts 0, 1, a tile +-1 and 300001 pixels overwrites every count",
          "[histogram][sizes]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t max_n = 300001;
  HistogramRig<uint32_t> rig(dev, typical(HistogramSample::u32, 1, 256, max_n));
  REQUIRE(rig.plan().algorithm() == HistogramAlgorithm::privatized);
  CHECK(rig.plan().replicas() >= 1);
  const uint64_t tile = rig.plan().samples_per_tile();
  CHECK(rig.plan().dispatch_count(0) == 1);
  CHECK(rig.plan().dispatch_count(max_n) == 2);
  for (uint64_t n : {uint64_t(0), uint64_t(1), tile - 1, tile, tile + 1, max_n})
    CHECK(rig.check(draw<uint32_t>(HistogramSample::u32, n, rng), n));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram of every sample type with 1 to 4 channels and 1, 7 or 256 even bins matches the host",
          "[histogram][types]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (HistogramSample s : kSamples) {
    if (!supported(dev, s)) {
      test::skip(std::string(to_string(s)) + " samples are not supported by this device");
      continue;
    }
    host::with_sample(s, [&](auto t) {
      using T = decltype(t);
      for (uint32_t channels : {1u, 4u})
        for (uint32_t bins : {1u, 7u, 256u}) {
          const uint64_t n = 20000 + rng() % 1000;
          HistogramRig<T> rig(dev, typical(s, channels, bins, n));
          CHECK(rig.check(draw<T>(s, n * channels, rng), n));
        }
    });
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram of 2 and 3 interleaved channels keeps each channel's pixels apart, at unaligned offsets",
          "[histogram][channels][offsets]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (uint32_t channels : {2u, 3u}) {
    const uint64_t n = 7001;
    HistogramRig<uint32_t> rig(dev, typical(HistogramSample::u32, channels, 100, n));
    for (uint64_t shift : {0u, 1u, 3u, 6u})
      CHECK(rig.check(draw<uint32_t>(HistogramSample::u32, n * channels, rng), n, {}, shift, shift));
    if (supported(dev, HistogramSample::u8)) {
      HistogramRig<uint8_t> bytes(dev, even(HistogramSample::u8, channels, 64, 0, 256, n));
      for (uint64_t shift : {0u, 5u, 15u})
        CHECK(bytes.check(draw<uint8_t>(HistogramSample::u8, n * channels, rng), n - shift, {}, shift, 1));
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram even bins: samples at every edge, at lower, just below upper and at upper (dropped)",
          "[histogram][edges]") {
  Device& dev = test::device();
  // Integer types over whole and partial ranges, bin counts that do and do not divide them; bins 2^s wide
  // (s = 0, 10, 12, 24, 31, and 16 past the shared budget) take a shift instead of the multiply.
  struct Range {
    HistogramSample sample;
    double lower, upper;
    uint32_t bins;
  };
  const Range ranges[] = {{HistogramSample::u8, 0, 256, 256},     {HistogramSample::u8, 3, 200, 7},
                          {HistogramSample::u16, 0, 65536, 9},    {HistogramSample::u32, 0, 4294967296.0, 7},
                          {HistogramSample::u32, 5, 4294967295.0, 256}, {HistogramSample::u32, 1, 2, 1},
                          {HistogramSample::i32, -2147483648.0, 2147483648.0, 256},
                          {HistogramSample::i32, -100, 100, 3},   {HistogramSample::i32, -7, 0, 256},
                          {HistogramSample::u32, 0, 4294967296.0, 256}, {HistogramSample::u16, 0, 65536, 16},
                          {HistogramSample::u32, 1000, 1000 + 65536, 64}, {HistogramSample::u32, 0, 2147483648.0, 1},
                          {HistogramSample::u32, 0, 4294967296.0, 1},   {HistogramSample::u32, 0, 4294967296.0, 65536}};
  for (const Range& r : ranges) {
    if (!supported(dev, r.sample)) continue;
    host::with_sample(r.sample, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_integral_v<T>) {
        const int64_t lo = int64_t(r.lower), hi = int64_t(r.upper);
        const int64_t tmin = int64_t(std::numeric_limits<T>::lowest()), tmax = int64_t(std::numeric_limits<T>::max());
        std::vector<T> v;
        auto add = [&](int64_t x) {
          if (x >= tmin && x <= tmax) v.push_back(T(x));
        };
        for (uint64_t i = 0; i <= r.bins; ++i) {
          // The first sample of bin i: lower + ceil(i * range / bins).
          const int64_t edge = lo + int64_t((uint64_t(i) * uint64_t(hi - lo) + r.bins - 1) / r.bins);
          for (int64_t x : {edge - 1, edge, edge + 1}) add(x);
        }
        for (int64_t x : {lo - 1, lo, hi - 1, hi, tmin, tmax}) add(x);
        HistogramRig<T> rig(dev, even(r.sample, 1, r.bins, r.lower, r.upper, v.size()));
        CHECK(rig.check(v, v.size()));
      }
    });
  }
  // f32: each edge as the float formula places it, its neighbours, the bounds, NaN, infinities and zeros.
  for (auto [lower, upper, bins] :
       {std::tuple{-1.0, 3.0, 7u}, std::tuple{0.0, 1.0, 256u}, std::tuple{-2.5, 1e6, 1000u}}) {
    std::vector<float> v;
    for (uint32_t i = 0; i <= bins; ++i) {
      const float edge = float(lower + (upper - lower) * i / bins);
      for (float x : {std::nextafter(edge, -INFINITY), edge, std::nextafter(edge, INFINITY)}) v.push_back(x);
    }
    for (float x : {float(lower), float(upper), std::nextafter(float(upper), -INFINITY), 0.0f, -0.0f,
                    std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY})
      v.push_back(x);
    HistogramRig<float> rig(dev, even(HistogramSample::f32, 1, bins, lower, upper, v.size()));
    CHECK(rig.check(v, v.size()));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram past the shared-memory budget takes global atomics: 65536 bins, 4096 bins x 4 channels",
          "[histogram][global]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 40000;
  HistogramRig<uint32_t> wide(dev, typical(HistogramSample::u32, 1, 65536, n));
  CHECK(wide.plan().algorithm() == HistogramAlgorithm::global);
  CHECK(wide.plan().replicas() == 0);
  CHECK(wide.check(draw<uint32_t>(HistogramSample::u32, n, rng), n));
  HistogramRig<float> four(dev, typical(HistogramSample::f32, 4, 4096, n));
  CHECK(four.plan().algorithm() == HistogramAlgorithm::global);
  CHECK(four.check(draw<float>(HistogramSample::f32, 4 * n, rng), n));
  // 2048 bins of one channel fit one copy in any budget (16 KiB at least); global is taken when asked for.
  HistogramRig<uint32_t> one(dev, typical(HistogramSample::u32, 1, 2048, n));
  CHECK(one.plan().algorithm() == HistogramAlgorithm::privatized);
  CHECK(one.check(draw<uint32_t>(HistogramSample::u32, n, rng), n));
  HistogramRig<uint32_t> asked(
      dev, typical(HistogramSample::u32, 1, 256, n, HistogramAlgorithm::global));
  CHECK(asked.plan().algorithm() == HistogramAlgorithm::global);
  CHECK(asked.check(draw<uint32_t>(HistogramSample::u32, n, rng), n));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram with 90% of the samples in one bin matches, privatized and global", "[histogram][skew]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 100003;
  HistogramRig<uint32_t> privatized(dev, typical(HistogramSample::u32, 1, 256, n));
  CHECK(privatized.check(draw<uint32_t>(HistogramSample::u32, n, rng, 90), n));
  HistogramRig<uint32_t> global(dev, typical(HistogramSample::u32, 1, 65536, n));
  CHECK(global.check(draw<uint32_t>(HistogramSample::u32, n, rng, 90), n));
  if (supported(dev, HistogramSample::u8)) {
    HistogramRig<uint8_t> bytes(dev, even(HistogramSample::u8, 4, 256, 0, 256, n));
    CHECK(bytes.check(draw<uint8_t>(HistogramSample::u8, 4 * n, rng, 90), n));
  }
  // Every sample in one bin.
  const std::vector<uint32_t> same(n, 123456789u);
  CHECK(privatized.check(same, n));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram by levels: uneven levels with empty bins, in shared memory and read from their buffer",
          "[histogram][levels]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (HistogramSample s : kSamples) {
    if (!supported(dev, s)) continue;
    host::with_sample(s, [&](auto t) {
      using T = decltype(t);
      for (auto [channels, bins] : {std::pair{1u, 5u}, std::pair{1u, 200u}, std::pair{2u, 33u}}) {
        const uint64_t n = 9001;
        HistogramRig<T> rig(dev, by_levels(s, channels, bins, n));
        const std::vector<T> levels = uneven_levels<T>(s, bins, rng);
        std::vector<T> v = draw<T>(s, n * channels, rng);
        std::copy(levels.begin(), levels.end(), v.begin());  // every level itself, counted in its bin
        CHECK(rig.check(v, n, levels));
      }
    });
  }
  // Levels that fit shared memory only without the copies (read from their buffer by the privatized kernel),
  // 65536 bins (global atomics, levels from their buffer), and 2048 bins x 4 channels (global atomics, the
  // levels staged in shared memory).
  for (auto [channels, bins] : {std::pair{1u, 3000u}, std::pair{1u, 65536u}, std::pair{4u, 2048u}}) {
    const uint64_t n = 30000;
    HistogramRig<uint32_t> rig(dev, by_levels(HistogramSample::u32, channels, bins, n));
    const bool one_copy_fits = bins * channels < 4096;  // within any budget (16 KiB at least)
    CHECK(rig.plan().algorithm() == (one_copy_fits ? HistogramAlgorithm::privatized : HistogramAlgorithm::global));
    std::vector<uint32_t> levels(bins + 1);
    for (uint32_t i = 0; i <= bins; ++i) levels[i] = 1000u + i * 60000u + (i % 7) * 1000u;
    CHECK(rig.check(draw<uint32_t>(HistogramSample::u32, n * channels, rng), n, levels));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram_indirect reads the pixel count on the GPU, clamps it to max_count and writes zeros for 0",
          "[histogram][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t max_n = 50001;
  HistogramRig<uint32_t> rig(dev, typical(HistogramSample::u32, 1, 256, max_n));
  const auto data = draw<uint32_t>(HistogramSample::u32, max_n, rng);
  const uint32_t tile = uint32_t(rig.plan().samples_per_tile());
  for (uint32_t gpu : {0u, 1u, tile + 1, uint32_t(max_n), uint32_t(max_n + 1000), 0xFFFFFFFFu})
    CHECK(rig.check(data, 0, {}, 0, 0, &gpu));
  HistogramRig<float> levels(dev, by_levels(HistogramSample::f32, 3, 40, max_n));
  const std::vector<float> lv = uneven_levels<float>(HistogramSample::f32, 40, rng);
  const uint32_t gpu = uint32_t(max_n - 77);
  CHECK(levels.check(draw<float>(HistogramSample::f32, 3 * max_n, rng), 0, lv, 2, 1, &gpu));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram splits samples past one storage-buffer binding into windows that keep each pixel's channels",
          "[histogram][windows][host]") {
  Device& dev = test::device(test::small_windows());  // 64 KiB bindings
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 20011;  // 3 channels of u32: about 4 windows
  HistogramRig<uint32_t> rig(dev, typical(HistogramSample::u32, 3, 256, n));
  CHECK(rig.plan().dispatch_count(n) >= 4);
  CHECK(rig.check(draw<uint32_t>(HistogramSample::u32, 3 * n, rng), n, {}, 1, 0));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram works with push descriptors off (descriptor sets per record)", "[histogram][descriptors][host]") {
  test::DeviceSetup setup;
  setup.options.disable_push_descriptors = true;
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 5000;
  HistogramRig<uint32_t> rig(dev, typical(HistogramSample::u32, 1, 256, n));
  for (int i = 0; i < 3; ++i) CHECK(rig.check(draw<uint32_t>(HistogramSample::u32, n, rng), n));
  const uint32_t gpu = 4000;
  CHECK(rig.check(draw<uint32_t>(HistogramSample::u32, n, rng), 0, {}, 0, 0, &gpu));
  rig.plan().release_descriptor_sets();
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram create refuses bad descriptions with a status and a message", "[histogram][errors][host]") {
  Device& dev = test::device();
  auto expect = [&](const HistogramDesc& d, Status status, const char* words) {
    const auto plan = Histogram::create(dev.context(), d);
    const std::string message = plan ? std::string("ok") : plan.error().message;
    INFO(message);
    CHECK(plan.status() == status);
    CHECK(message.find("Histogram::create") != std::string::npos);
    CHECK(message.find(words) != std::string::npos);
  };
  const HistogramDesc good = even(HistogramSample::u32, 1, 256, 0, 4294967296.0, 1000);
  auto with = [&](auto change) {
    HistogramDesc d = good;
    change(d);
    return d;
  };
  expect(with([](HistogramDesc& d) { d.bins = 0; }), Status::invalid_argument, "bins 0");
  expect(with([](HistogramDesc& d) { d.bins = 65537; }), Status::invalid_argument, "bins 65537");
  expect(with([](HistogramDesc& d) { d.channels = 0; }), Status::invalid_argument, "channels 0");
  expect(with([](HistogramDesc& d) { d.channels = 5; }), Status::invalid_argument, "channels 5");
  expect(with([](HistogramDesc& d) { d.max_count = 0; }), Status::invalid_argument, "max_count 0");
  expect(with([](HistogramDesc& d) { d.lower = d.upper = 7; }), Status::invalid_argument, "lower < upper");
  expect(with([](HistogramDesc& d) { d.lower = 9, d.upper = 7; }), Status::invalid_argument, "lower < upper");
  expect(with([](HistogramDesc& d) { d.upper = 4294967297.0; }), Status::invalid_argument, "whole numbers");
  expect(with([](HistogramDesc& d) { d.lower = -1; }), Status::invalid_argument, "whole numbers");
  expect(with([](HistogramDesc& d) { d.lower = 0.5; }), Status::invalid_argument, "whole numbers");
  expect(with([](HistogramDesc& d) { d.sample = HistogramSample::u8, d.upper = 257; }), Status::invalid_argument,
         "u8 samples");
  expect(with([](HistogramDesc& d) { d.sample = HistogramSample::f32, d.lower = 0.1; }), Status::invalid_argument,
         "exactly a float");
  expect(with([](HistogramDesc& d) { d.sample = HistogramSample::f32, d.upper = INFINITY; }),
         Status::invalid_argument, "finite");
  expect(with([](HistogramDesc& d) { d.sample = HistogramSample(9); }), Status::invalid_argument, "sample type 9");
  expect(with([](HistogramDesc& d) { d.binning = HistogramBinning(9); }), Status::invalid_argument, "binning 9");
  expect(with([](HistogramDesc& d) { d.algorithm = HistogramAlgorithm(9); }), Status::invalid_argument,
         "algorithm 9");
  expect(with([](HistogramDesc& d) { d.tuning.items_per_thread = 2; }), Status::invalid_argument,
         "tuning.items_per_thread");
  expect(with([](HistogramDesc& d) { d.tuning.workgroup_size = 100; }), Status::invalid_argument,
         "tuning.workgroup_size");
  expect(with([](HistogramDesc& d) { d.bins = 65536, d.algorithm = HistogramAlgorithm::privatized; }),
         Status::unsupported, "privatized");
  // Levels plans ignore lower and upper.
  CHECK(Histogram::create(dev.context(), by_levels(HistogramSample::u32, 1, 8, 10)).ok());
  Device& narrow = test::device_without(feature_storage_8bit | feature_storage_16bit);
  for (HistogramSample s : {HistogramSample::u8, HistogramSample::u16}) {
    const auto plan = Histogram::create(narrow.context(), even(s, 1, 16, 0, 256, 100));
    INFO(to_string(s) << ": " << (plan ? std::string("ok") : plan.error().message));
    CHECK(plan.status() == Status::unsupported);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("histogram record and record_indirect refuse bad buffers with a message and record nothing",
          "[histogram][errors][host]") {
  Device& dev = test::device();
  const uint64_t n = 1000;
  const Histogram plan = make_histogram(dev.context(), even(HistogramSample::u32, 2, 64, 0, 4294967296.0, n));
  const Histogram levels = make_histogram(dev.context(), by_levels(HistogramSample::u16, 1, 10, n));
  Buffer a = test::make_buffer(dev, 64 * 1024), h = test::make_buffer(dev, 64 * 1024), l = test::make_buffer(dev, 256);
  Buffer cnt = test::make_buffer(dev, 64);
  const VkDeviceSize need = plan.scratch_requirements().size;
  Buffer scratch = test::make_buffer(dev, need + 64);
  const VkDeviceSize sample_bytes = n * 2 * 4, count_bytes = 64 * 2 * 4;
  struct Case {
    const char* what;
    BufferRange samples, histogram;
    uint64_t n;
    BufferRange scratch, levels;
    const char* words;
  };
  const std::vector<Case> cases = {
      {"count past max_count", a.range(), h.range(), n + 1, scratch.range(), {}, "max_count"},
      {"null samples", {}, h.range(), n, scratch.range(), {}, "samples"},
      {"small samples", a.range(0, sample_bytes - 4), h.range(), n, scratch.range(), {}, "samples"},
      {"misaligned samples", a.range(2, sample_bytes), h.range(), n, scratch.range(), {}, "samples"},
      {"null histogram", a.range(), {}, n, scratch.range(), {}, "histogram"},
      {"small histogram", a.range(), h.range(0, count_bytes - 4), n, scratch.range(), {}, "histogram"},
      {"misaligned histogram", a.range(), h.range(2, count_bytes), n, scratch.range(), {}, "histogram"},
      {"whole-size histogram", a.range(), BufferRange{h.handle(), 0, VK_WHOLE_SIZE}, n, scratch.range(), {},
       "VK_WHOLE_SIZE"},
      {"null scratch", a.range(), h.range(), n, {}, {}, "scratch"},
      {"small scratch", a.range(), h.range(), n, scratch.range(0, need - 16), {}, "scratch"},
      {"levels for even bins", a.range(), h.range(), n, scratch.range(), l.range(), "levels"},
      {"histogram overlaps samples", a.range(0, sample_bytes), a.range(sample_bytes - 64, count_bytes), n,
       scratch.range(), {}, "overlap"},
      {"scratch overlaps samples", a.range(0, sample_bytes), h.range(), n, a.range(0, need), {}, "overlap"},
      {"scratch overlaps histogram", a.range(), h.range(0, count_bytes), n, h.range(256, need), {}, "overlap"},
  };
  test::poison(dev, h);
  for (const Case& k : cases) {
    const Result<void> r =
        test::recorded_result(dev, [&](VkCommandBuffer cmd) {
          return plan.record(cmd, k.samples, k.histogram, k.n, k.scratch, k.levels);
        });
    INFO(k.what << ": " << r.message());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().find("Histogram::record") != std::string::npos);
    CHECK(r.message().find(k.words) != std::string::npos);
  }
  // A levels plan needs its levels, bins + 1 samples of its type, away from the histogram.
  auto record_levels = [&](BufferRange lv, BufferRange out) {
    return test::recorded_result(
        dev, [&](VkCommandBuffer cmd) { return levels.record(cmd, a.range(0, n * 2), out, n, scratch.range(), lv); });
  };
  for (auto [lv, out, words] : {std::tuple{BufferRange{}, h.range(0, 40), "levels"},
                                std::tuple{l.range(0, 20), h.range(0, 40), "levels"},
                                std::tuple{l.range(1, 22), h.range(0, 40), "levels"},
                                std::tuple{h.range(0, 22), h.range(0, 40), "overlap"}}) {
    const Result<void> r = record_levels(lv, out);
    INFO(r.message());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().find(words) != std::string::npos);
  }
  // record_indirect: the count buffer's checks, and its overlap with the histogram.
  auto record_indirect = [&](BufferRange count, BufferRange out) {
    return test::recorded_result(dev, [&](VkCommandBuffer cmd) {
      return plan.record_indirect(cmd, a.range(0, sample_bytes), out, count, scratch.range());
    });
  };
  for (auto [count, out, words] : {std::tuple{cnt.range(2, 4), h.range(0, count_bytes), "count"},
                                   std::tuple{BufferRange{}, h.range(0, count_bytes), "count"},
                                   std::tuple{h.range(8, 4), h.range(0, count_bytes), "overlap"}}) {
    const Result<void> r = record_indirect(count, out);
    INFO(r.message());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().find("Histogram::record_indirect") != std::string::npos);
    CHECK(r.message().find(words) != std::string::npos);
  }
  CHECK(test::still_poisoned(dev, h));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
