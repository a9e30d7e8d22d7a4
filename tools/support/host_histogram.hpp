// Host-side reference of vkprim/histogram.hpp: a sample's bin (even bins as the header defines them, or by
// levels) and the channel-major histogram of interleaved samples, plus the benches' and tests' sample
// distributions. Shared by the tests and `vkprim bench histogram`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "vkprim/histogram.hpp"

namespace vkprim::host {

// Calls f(T{}) with the C++ type of a HistogramSample.
template <class F>
decltype(auto) with_sample(HistogramSample sample, F&& f) {
  switch (sample) {
    case HistogramSample::u8: return f(uint8_t{});
    case HistogramSample::u16: return f(uint16_t{});
    case HistogramSample::u32: return f(uint32_t{});
    case HistogramSample::i32: return f(int32_t{});
    case HistogramSample::f32: return f(float{});
  }
  return f(uint32_t{});
}

constexpr int64_t kNoBin = -1;

// The even bin of s over [lower, upper), or kNoBin. Integers exactly, f32 in single precision as the header
// states: t = (s - lower) * scale, scale = (float)(bins / (upper - lower)) computed in double.
template <class T>
int64_t even_bin(T s, double lower, double upper, uint32_t bins) {
  if constexpr (std::is_floating_point_v<T>) {
    const float lo = float(lower), hi = float(upper);
    if (!(s >= lo && s < hi)) return kNoBin;
    const float scale = float(double(bins) / (upper - lower));
    const float t = (s - lo) * scale;
    return int64_t(std::min(t, float(bins - 1)));
  } else {
    const int64_t v = int64_t(s), lo = int64_t(lower), hi = int64_t(upper);
    if (v < lo || v >= hi) return kNoBin;
    return int64_t(uint64_t(v - lo) * bins / uint64_t(hi - lo));  // < 2^32 * 2^16: no overflow
  }
}

// The bin of s between ascending levels (bins + 1 of them): the largest i < bins with levels[i] <= s, for
// levels[0] <= s < levels[bins]; else kNoBin (NaN included).
template <class T>
int64_t levels_bin(T s, const std::vector<T>& levels) {
  const size_t bins = levels.size() - 1;
  if (!(s >= levels[0] && s < levels[bins])) return kNoBin;
  return int64_t(std::upper_bound(levels.begin(), levels.begin() + std::ptrdiff_t(bins), s) - levels.begin()) - 1;
}

// histogram[c * bins + b]: the pixels among the first `count` whose channel c (sample p * channels + c)
// falls in bin b; bin(sample) gives a bin or kNoBin.
template <class T, class Bin>
std::vector<uint32_t> histogram(const std::vector<T>& samples, uint64_t count, uint32_t channels, uint32_t bins,
                                Bin&& bin) {
  std::vector<uint32_t> counts(size_t(bins) * channels, 0);
  for (uint64_t i = 0; i < count * channels; ++i) {
    const int64_t b = bin(samples[i]);
    if (b != kNoBin) ++counts[size_t(i % channels) * bins + size_t(b)];
  }
  return counts;
}

// The reference of a plan's description: even bins or `levels`.
template <class T>
std::vector<uint32_t> histogram(const HistogramDesc& d, const std::vector<T>& samples, uint64_t count,
                                const std::vector<T>& levels = {}) {
  if (d.binning == HistogramBinning::levels)
    return histogram(samples, count, d.channels, d.bins, [&](T s) { return levels_bin(s, levels); });
  return histogram(samples, count, d.channels, d.bins, [&](T s) { return even_bin(s, d.lower, d.upper, d.bins); });
}

// The default range of a sample type: every value of an integer type, [-1, 1) for f32
// (`vkprim bench histogram` and `vkprim verify`).
inline void default_range(HistogramSample s, double& lower, double& upper) {
  switch (s) {
    case HistogramSample::u8: lower = 0, upper = 256; break;
    case HistogramSample::u16: lower = 0, upper = 65536; break;
    case HistogramSample::u32: lower = 0, upper = 4294967296.0; break;
    case HistogramSample::i32: lower = -2147483648.0, upper = 2147483648.0; break;
    case HistogramSample::f32: lower = -1, upper = 1; break;
  }
}

// A sample uniform on [lower, upper) (integers: whole numbers; the range clamped to the type's).
template <class T>
T uniform_sample(double lower, double upper, std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    return T(lower + (upper - lower) * std::uniform_real_distribution<double>(0.0, 1.0)(rng));
  } else {
    const double lo = std::max<double>(lower, double(std::numeric_limits<T>::lowest()));
    const double hi = std::min<double>(upper - 1, double(std::numeric_limits<T>::max()));
    return T(std::uniform_int_distribution<int64_t>(int64_t(lo), int64_t(hi))(rng));
  }
}

// n samples uniform on [lower, upper), except that `hot_percent` percent of them (chosen at random) equal
// `hot`: the skewed input of the bench (90% in one bin) and the tests.
template <class T>
std::vector<T> histogram_samples(uint64_t n, double lower, double upper, double hot_percent, T hot,
                                 std::mt19937_64& rng) {
  std::vector<T> v(n);
  std::uniform_real_distribution<double> percent(0.0, 100.0);
  for (auto& x : v) x = hot_percent > 0 && percent(rng) < hot_percent ? hot : uniform_sample<T>(lower, upper, rng);
  return v;
}

}  // namespace vkprim::host
