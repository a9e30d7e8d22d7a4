// The histogram part of `vkprim verify`: every sample type the device reads, privatized and global, one and
// four channels, even bins and levels, at a few sizes, against the host reference (host_histogram.hpp).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "histogram_commands.hpp"
#include "host_histogram.hpp"
#include "vkprim/histogram.hpp"

namespace vkprim::tools {

namespace {

template <class T>
bool verify_one(const Device& device, const HistogramDesc& desc, std::mt19937_64& rng, std::string& why) {
  const uint64_t sizes[] = {0, 1, 65537};
  auto plan = Histogram::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    why = plan.error().message;
    return false;
  }
  const uint64_t samples_n = desc.max_count * desc.channels;
  auto samples = device.create_buffer((samples_n * sizeof(T) + 15) / 16 * 16);
  auto levels = device.create_buffer(((desc.bins + 1) * sizeof(T) + 15) / 16 * 16);
  auto output = device.create_buffer(uint64_t(desc.bins) * desc.channels * 4);
  auto scratch = device.create_buffer(plan->scratch_requirements().size);
  if (!samples || !levels || !output || !scratch) {
    why = "buffer allocation failed";
    return false;
  }
  // Levels: the even bins' edges, so both binnings see the same samples fall in every bin.
  std::vector<T> edges(desc.bins + 1);
  for (uint32_t i = 0; i <= desc.bins; ++i)
    edges[i] = T(desc.lower + (desc.upper - desc.lower) * i / desc.bins - (i == desc.bins && !std::is_floating_point_v<T>));
  const bool by_levels = desc.binning == HistogramBinning::levels;
  std::vector<uint32_t> got(size_t(desc.bins) * desc.channels);
  for (uint64_t n : sizes) {
    // 10% of the samples in one value, the skew the privatized kernel's register runs are for.
    const std::vector<T> host = host::histogram_samples<T>(samples_n, desc.lower, desc.upper, 10, T(0), rng);
    auto ready = device.upload(samples.value(), host.data(), samples_n * sizeof(T));
    if (ready && by_levels) ready = device.upload(levels.value(), edges.data(), edges.size() * sizeof(T));
    if (ready) ready = device.fill(output.value(), 0xDEADBEEF);
    Result<void> recorded;
    if (ready)
      ready = device.submit([&](VkCommandBuffer cmd) {
        recorded = plan->record(cmd, samples->range(), output->range(), n, scratch->range(),
                                by_levels ? levels->range() : BufferRange{});
      });
    if (ready && recorded) ready = device.download(output.value(), got.data(), got.size() * 4);
    if (!ready || !recorded) {
      why = !recorded ? recorded.message() : ready.message();
      return false;
    }
    if (got != host::histogram(desc, host, n, edges)) {
      why = "n=" + std::to_string(n) + ": the counts differ from the host reference";
      return false;
    }
  }
  return true;
}

}  // namespace

int verify_histogram(const Device& device, std::mt19937_64& rng) {
  const Capabilities& caps = device.context().capabilities();
  int passed = 0, failed = 0, skipped = 0;
  for (HistogramSample s : {HistogramSample::u8, HistogramSample::u16, HistogramSample::u32, HistogramSample::i32,
                            HistogramSample::f32}) {
    if ((s == HistogramSample::u8 && !caps.has(feature_storage_8bit)) ||
        (s == HistogramSample::u16 && !caps.has(feature_storage_16bit))) {
      ++skipped;
      continue;
    }
    for (HistogramAlgorithm a : {HistogramAlgorithm::privatized, HistogramAlgorithm::global})
      for (uint32_t channels : {1u, 4u})
        for (HistogramBinning binning : {HistogramBinning::even, HistogramBinning::levels}) {
          HistogramDesc desc;
          desc.sample = s;
          desc.channels = channels;
          desc.bins = 256;
          desc.binning = binning;
          desc.max_count = 65537;
          desc.algorithm = a;
          host::default_range(s, desc.lower, desc.upper);
          std::string why;
          const bool ok = host::with_sample(s, [&](auto t) { return verify_one<decltype(t)>(device, desc, rng, why); });
          if (ok) {
            ++passed;
          } else {
            ++failed;
            std::printf("FAIL histogram %s %s %u channel(s) %s: %s\n", to_string(a), to_string(s), channels,
                        to_string(binning), why.c_str());
          }
        }
  }
  std::printf("histogram: %d passed, %d failed%s\n", passed, failed,
              skipped ? " (8- or 16-bit storage unsupported: those samples skipped)" : "");
  return failed;
}

}  // namespace vkprim::tools
