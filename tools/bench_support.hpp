// Measurement helpers for `vkprim bench`: timestamp timing, the copy/read ceilings, size lists.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <functional>
#include <string>
#include <vector>

#include "host_reference.hpp"
#include "vkprim/device.hpp"

namespace vkprim::tools {

// GPU time of `record`, run `repeats` times in one command buffer, each run between two bottom-of-pipe
// timestamps with a full compute barrier before it (runs never overlap). Returns nanoseconds per run.
Result<std::vector<double>> time_gpu(const Device& device, int repeats, const std::function<Result<void>(VkCommandBuffer)>& record);

double median(std::vector<double> values);

using Recorder = std::function<Result<void>(VkCommandBuffer)>;
// Runs `run` back to back for about `ms` milliseconds of GPU time, so clocks have ramped up before
// timing (a scan timed right after short ceiling runs measured ~15% slower on an H200).
Result<void> warm_up(const Device& device, const Recorder& run, double ms = 200);

// 16-byte-vector shader copy (src -> dst) and read of `bytes` bytes: the ceilings scans and reduces are
// compared against. GB/s from the median of `repeats` runs.
struct Ceilings {
  double copy_gbps = 0;  // counting read + write
  double read_gbps = 0;
};
Result<Ceilings> measure_ceilings(const Device& device, const Buffer& src, const Buffer& dst, uint64_t bytes,
                                  int repeats);

// Fresh random values (host_reference.hpp's fill_random) for `n` elements, uploaded to the start of
// `buffer`; the host copy is returned for verification. Prints and returns an empty vector on failure.
template <class T>
std::vector<T> upload_random(const Device& device, const Buffer& buffer, uint64_t n) {
  std::vector<T> host(n);
  std::mt19937_64 rng(std::random_device{}());
  host::fill_random(host, rng);
  if (auto ok = device.upload(buffer, host.data(), n * sizeof(T)); !ok) {
    std::fprintf(stderr, "bench: upload failed: %s\n", ok.message().c_str());
    return {};
  }
  return host;
}

// "2^10..2^28" (every power of two), "2^20,2^24+1,1000" or a mix.
bool parse_sizes(const std::string& text, std::vector<uint64_t>& out);
std::string size_label(uint64_t n);

}  // namespace vkprim::tools
