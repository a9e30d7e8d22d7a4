// The runs `vkprim demo` shows: each primitive's automatic plan at one size, measured by its bench's own code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// One line of `vkprim demo`: a primitive's automatic plan at one size, as its bench measured and verified it.
struct Summary {
  std::string primitive, what, algorithm;  // what: the workload ("u32 add", "u32 keys", "u32 flagged 50%")
  uint64_t n = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;  // of_*: against the ceilings measured next to it
  bool verified = false;
};
// The Summary of the first row of `primitive` in a bench's rows that is neither a ceiling nor the CPU's;
// nothing when the bench left none (it failed before timing the plan, and said why on stderr).
template <class Row>
std::optional<Summary> summarize(const std::vector<Row>& rows, const std::string& primitive, const std::string& what) {
  for (const Row& r : rows)
    if (r.primitive == primitive && r.algorithm.rfind("cpu", 0) != 0)
      return Summary{primitive, what, r.algorithm, r.n, r.median_us, r.gbps, r.of_read, r.of_copy, r.verified};
  return std::nullopt;
}

// The automatic plan of each primitive on u32 data at `n` elements (reduce: add; scan: inclusive add; sort:
// keys, ascending; select: flagged, 50% of the flags set), timed (median of `repeats` after the warm-up)
// and verified against the CPU exactly as `vkprim bench <primitive>` does it, with the read and copy
// ceilings measured on the same buffers just before. Nothing when the bench failed before timing the plan
// (it said why on stderr).
std::optional<Summary> demo_reduce(const Device& device, uint64_t n, int repeats);
std::optional<Summary> demo_scan(const Device& device, uint64_t n, int repeats);
std::optional<Summary> demo_sort(const Device& device, uint64_t n, int repeats);
std::optional<Summary> demo_select(const Device& device, uint64_t n, int repeats);

}  // namespace vkprim::tools
