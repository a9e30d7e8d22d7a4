// Measurement helpers for `vkprim bench`: timestamp timing, the copy/read ceilings, size lists.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

// "2^10..2^28" (every power of two), "2^20,2^24+1,1000" or a mix.
bool parse_sizes(const std::string& text, std::vector<uint64_t>& out);
std::string size_label(uint64_t n);

}  // namespace vkprim::tools
