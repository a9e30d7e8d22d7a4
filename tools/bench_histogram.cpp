// `vkprim bench histogram`: GPU time from timestamps (median after warm-up), GB/s counting the samples read
// (the histogram written is a few KiB), G samples/s, the ratio to the read and copy ceilings measured on the
// same buffers in the same run, a CPU row, and every result verified against the host reference.
// Samples are uniform on [lower, upper) (default: the type's whole range; f32 [-1, 1)), or with --skew [P] P% of
// them (90 without a number) one value of the range (one bin) and the rest uniform.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "histogram_commands.hpp"
#include "host_histogram.hpp"
#include "vkprim/histogram.hpp"

namespace vkprim::tools {

namespace {

struct HistogramRow {
  std::string primitive, algorithm, sample, binning;
  uint32_t channels = 1, bins = 0;
  double skew = 0;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, gsamples = 0, of_read = 0, of_copy = 0;
  bool verified = false;
};

void write_histogram_json(const std::string& path, const std::string& device, const std::vector<HistogramRow>& rows) {
  write_json(path, device, rows, [&](const HistogramRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("type", r.sample);
    json.number("channels", r.channels).number("bins", r.bins).text("binning", r.binning).number("skew", r.skew);
    json.number("n", r.n).number("median_us", r.median_us).number("gbps", r.gbps).number("gsamples", r.gsamples);
    json.number("of_read", r.of_read).number("of_copy", r.of_copy).flag("verified", r.verified);
  });
}

void print_histogram_rows(const std::vector<HistogramRow>& rows) {
  std::printf("%-9s %-24s %-4s %2s %6s %-6s %5s %8s %12s %10s %10s %8s %8s %s\n", "primitive", "algorithm", "type",
              "ch", "bins", "binning", "skew", "n", "median_us", "GB/s", "Gsample/s", "x_read", "x_copy", "verified");
  for (const HistogramRow& r : rows)
    std::printf("%-9s %-24s %-4s %2u %6u %-6s %5.0f %8s %12.2f %10.1f %10.2f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.sample.c_str(), r.channels, r.bins, r.binning.c_str(), r.skew,
                size_label(r.n).c_str(), r.median_us, r.gbps, r.gsamples, r.of_read, r.of_copy,
                verified_cell(r.verified, "").c_str());
}

struct Variant {
  HistogramAlgorithm algorithm = HistogramAlgorithm::automatic;
  Tuning tuning{};
  std::string label;  // the override as written ("@256x4x1056"), empty without one
};

// What one run measures: the description's sample, channels, binning and range (bins and max_count are set per
// bins value), the share of samples in the hot bin, the sizes (pixels) and repeats.
struct Sweep {
  HistogramDesc base;
  double skew = 0;
  std::vector<uint64_t> sizes;
  int repeats = 20;
};

// bins + 1 levels evenly spaced over [lower, upper] (integers rounded down; ascending, perhaps with equal
// neighbours where the range has fewer values than bins).
template <class T>
std::vector<T> even_levels(const HistogramDesc& d) {
  std::vector<T> levels(d.bins + 1);
  for (uint32_t i = 0; i <= d.bins; ++i) {
    const double x = d.lower + (d.upper - d.lower) * i / d.bins;
    levels[i] = std::is_floating_point_v<T> ? T(x) : T(std::min(x, d.upper - 1));
  }
  if constexpr (std::is_floating_point_v<T>) levels[d.bins] = T(d.upper);
  return levels;
}

// One bins value's plans (a variant each) and buffers, the samples and levels uploaded, their host copies.
template <class T>
struct BinsSetup {
  HistogramDesc desc;
  PlanSet<Histogram> set;
  Buffer samples, copy_target, counts, levels_buffer, scratch;  // largest first (DESIGN.md)
  std::vector<T> host_samples, levels;

  BufferRange levels_range() const {
    return levels.empty() ? BufferRange{} : levels_buffer.range(0, levels.size() * sizeof(T));
  }
};

// Creates the plans of `variants` for `bins` and max_count the largest size, and their buffers; draws and
// uploads the samples (and levels). False after printing why.
template <class T>
bool set_up_bins(const Device& device, const Sweep& sweep, uint32_t bins, const std::vector<Variant>& variants,
                 BinsSetup<T>& s) {
  const uint64_t max_n = *std::max_element(sweep.sizes.begin(), sweep.sizes.end());
  s.desc = sweep.base;
  s.desc.bins = bins;
  s.desc.max_count = max_n;
  for (const Variant& v : variants) {
    HistogramDesc d = s.desc;
    d.algorithm = v.algorithm;
    d.tuning = v.tuning;
    const std::string what = "histogram " + std::string(to_string(v.algorithm)) + v.label;
    if (auto added = s.set.add(Histogram::create(const_cast<Device&>(device).context(), d), v.label, what); !added) {
      std::fprintf(stderr, "%s failed: %s\n", what.c_str(), added.error().message.c_str());
      return false;
    }
  }
  if (s.set.plans.empty()) {
    std::fprintf(stderr, "bench: no requested histogram algorithm is available on this device\n");
    return false;
  }
  const uint32_t channels = s.desc.channels;
  const VkDeviceSize bytes = vector_bytes(max_n * channels * sizeof(T));
  auto samples = device.create_buffer(bytes);
  auto copy_target = device.create_buffer(bytes);
  auto counts = device.create_buffer(uint64_t(bins) * channels * 4);
  auto levels_buffer = device.create_buffer(vector_bytes((bins + 1) * sizeof(T)));
  auto scratch = device.create_buffer(s.set.scratch_bytes);
  if (!samples || !copy_target || !counts || !levels_buffer || !scratch) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return false;
  }
  s.samples = std::move(samples).value();
  s.copy_target = std::move(copy_target).value();
  s.counts = std::move(counts).value();
  s.levels_buffer = std::move(levels_buffer).value();
  s.scratch = std::move(scratch).value();
  std::mt19937_64 rng(std::random_device{}());
  const T hot = host::uniform_sample<T>(s.desc.lower, s.desc.upper, rng);
  s.host_samples = host::histogram_samples<T>(max_n * channels, s.desc.lower, s.desc.upper, sweep.skew, hot, rng);
  if (s.desc.binning == HistogramBinning::levels) s.levels = even_levels<T>(s.desc);
  Result<void> ok = device.upload(s.samples, s.host_samples.data(), s.host_samples.size() * sizeof(T));
  if (ok && !s.levels.empty()) ok = device.upload(s.levels_buffer, s.levels.data(), s.levels.size() * sizeof(T));
  if (!ok) std::fprintf(stderr, "bench: upload: %s\n", ok.message().c_str());
  return ok.ok();
}

// The rows of one size n: the ceilings, the CPU, then every plan timed and checked against the CPU's counts.
// Returns the number of mismatches, or -1 after printing an error.
template <class T>
int bench_size(const Device& device, const Sweep& sweep, BinsSetup<T>& s, uint64_t n, std::vector<HistogramRow>& rows) {
  const HistogramDesc& d = s.desc;
  const uint32_t channels = d.channels;
  const double read = double(n) * channels * sizeof(T);
  progress("bench histogram %s x%u %u bins n=%s ...\n", to_string(d.sample), channels, d.bins, size_label(n).c_str());
  std::vector<uint32_t> expected, got(size_t(d.bins) * channels);
  const double cpu = time_cpu([&] { expected = host::histogram(d, s.host_samples, n, s.levels); });
  auto record_for = [&](const Histogram& plan) -> Recorder {
    return [&, n](VkCommandBuffer cmd) {
      return plan.record(cmd, s.samples.range(0, std::max<uint64_t>(n * channels, 1) * sizeof(T)),
                         s.counts.range(0, got.size() * 4), n, s.scratch.range(), s.levels_range());
    };
  };
  const auto ceilings = warm_then_ceilings(device, s.set.plans.front(), record_for(s.set.plans.front()), s.samples,
                                           s.copy_target, uint64_t(read), sweep.repeats);
  if (!ceilings) return -1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return HistogramRow{"ceiling", name, "u32", "-", 1, 0, 0, n, us, gbps, 0, of_read, of_copy, true};
  });
  auto row = [&](const std::string& algorithm, double ns, bool ok) {
    const double gbps = read / ns;
    return HistogramRow{"histogram", algorithm, to_string(d.sample), to_string(d.binning), channels, d.bins,
                        sweep.skew, n, ns / 1e3, gbps, double(n) * channels / ns, ceilings->of_read(gbps),
                        ceilings->of_copy(gbps), ok};
  };
  rows.push_back(row("cpu", cpu, true));
  int failures = 0;
  for (size_t k = 0; k < s.set.plans.size(); ++k) {
    const auto t = warm_and_time(device, sweep.repeats, record_for(s.set.plans[k]));
    s.set.plans[k].release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: histogram %s: %s\n", s.set.labels[k].c_str(), t.error().message.c_str());
      return -1;
    }
    const bool ok = bool(device.download(s.counts, got.data(), got.size() * 4)) && got == expected;
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH histogram %s %u bins n=%llu\n", s.set.labels[k].c_str(), d.bins,
                   (unsigned long long)n);
    }
    rows.push_back(row(s.set.labels[k], t.value(), ok));
  }
  return failures;
}

// One bins value: every variant at every size, each checked against the host.
template <class T>
int bench_bins(const Device& device, const Sweep& sweep, uint32_t bins, const std::vector<Variant>& variants,
               std::vector<HistogramRow>& rows) {
  BinsSetup<T> s;
  if (!set_up_bins(device, sweep, bins, variants, s)) return 1;
  int failures = 0;
  for (uint64_t n : sweep.sizes) {
    const int f = bench_size(device, sweep, s, n, rows);
    if (f < 0) return 1;
    failures += f;
  }
  return failures ? 1 : 0;
}

// --algorithm: one name, "all", or a comma-separated list; NAME@WGxV[xG] overrides the workgroup size, the
// vectors per invocation and the grid (0 keeps the default). False on an unknown name.
bool parse_variants(const std::string& algorithm, std::vector<Variant>& variants) {
  const std::string list = algorithm == "all" ? "privatized,global" : algorithm;
  for (const AlgorithmChoice& choice : split_algorithms(list)) {
    Variant v;
    if (!parse(choice.name.c_str(), v.algorithm)) {
      std::fprintf(stderr, "vkprim bench histogram: unknown algorithm '%s' (automatic, privatized, global)\n",
                    choice.name.c_str());
      return false;
    }
    v.tuning.workgroup_size = choice.workgroup_size;
    v.tuning.vectors_per_thread = choice.per_thread;
    v.tuning.max_workgroups = choice.tuning;
    v.label = choice.shape;
    variants.push_back(v);
  }
  return true;
}

// --bins: a comma-separated list of bin counts.
bool parse_bins(const std::string& text, std::vector<uint32_t>& out) {
  for (size_t pos = 0; pos <= text.size();) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::vector<uint64_t> values;
    if (!parse_sizes(text.substr(pos, comma - pos), values)) return false;
    for (uint64_t b : values) out.push_back(uint32_t(std::min<uint64_t>(b, 0xFFFFFFFFu)));
    pos = comma + 1;
  }
  return !out.empty();
}

// --skew [PERCENT]: the percent of the samples set to one value (90 where no number follows); 0 without it.
double take_skew(std::vector<std::string>& args) {
  const auto it = std::find(args.begin(), args.end(), "--skew");
  if (it == args.end()) return 0;
  double percent = 90;
  if (it + 1 != args.end() && !(it + 1)->empty() && std::isdigit(static_cast<unsigned char>((*(it + 1))[0]))) {
    percent = std::atof((it + 1)->c_str());
    args.erase(it + 1);
  }
  args.erase(it);
  return std::clamp(percent, 0.0, 100.0);
}

}  // namespace

int run_bench_histogram(std::vector<std::string> args) {
  std::string sample_s = "u32", bins_s = "256", channels_s = "1", binning_s = "even", lower_s, upper_s;
  if (!take_option(args, "--sample", sample_s)) take_option(args, "--type", sample_s);
  take_option(args, "--bins", bins_s);
  take_option(args, "--channels", channels_s);
  take_option(args, "--binning", binning_s);
  take_option(args, "--lower", lower_s);
  take_option(args, "--upper", upper_s);
  const double skew = take_skew(args);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench histogram", common, rc);
  if (!device) return rc;
  Sweep sweep;
  std::vector<uint32_t> bins;
  if (!parse(sample_s.c_str(), sweep.base.sample) || !parse(binning_s.c_str(), sweep.base.binning) ||
      !parse_bins(bins_s, bins) || !parse_sizes(common.sizes, sweep.sizes)) {
    std::fprintf(stderr, "vkprim bench histogram: bad --sample, --binning, --bins or --sizes\n");
    return 2;
  }
  sweep.base.channels = uint32_t(std::atoi(channels_s.c_str()));
  host::default_range(sweep.base.sample, sweep.base.lower, sweep.base.upper);
  if (!lower_s.empty()) sweep.base.lower = std::atof(lower_s.c_str());
  if (!upper_s.empty()) sweep.base.upper = std::atof(upper_s.c_str());
  sweep.skew = skew;
  sweep.repeats = common.repeats;
  std::vector<Variant> variants;
  if (!parse_variants(common.algorithm, variants)) return 2;
  char counting[256];
  std::snprintf(counting, sizeof(counting),
                "; GB/s count the samples read (n pixels x %u channels x %u bytes); samples uniform on [%g, %g), "
                "%g%% of them in one bin",
                sweep.base.channels, size_of(sweep.base.sample), sweep.base.lower, sweep.base.upper, skew);
  print_bench_header(*device, common.repeats, counting);
  std::vector<HistogramRow> rows;
  for (uint32_t b : bins) {
    rc |= host::with_sample(sweep.base.sample, [&](auto t) {
      return bench_bins<decltype(t)>(*device, sweep, b, variants, rows);
    });
  }
  print_histogram_rows(rows);
  if (!common.json.empty()) write_histogram_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
