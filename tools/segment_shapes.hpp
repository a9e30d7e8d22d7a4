// The segmented benches' segment shapes, standard C++ only: `vkprim bench segmented_reduce|segmented_sort`
// and bench/cub/cub_bench.cu draw their segments here, so both sides of a comparison sort the same shapes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace vkprim::tools {

// CSR offsets of n elements end to end: segments of `size` elements (the last cut at n), or, with size 0,
// power-law lengths min_length + floor(span^(u v)) - 1 for u, v uniform on [0, 1) (min_length to
// min_length + span - 2, most of them short), cut at n.
inline std::vector<uint32_t> segment_offsets(uint64_t n, uint64_t size, double span, uint64_t min_length,
                                             std::mt19937_64& rng) {
  std::vector<uint32_t> offsets = {0};
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (uint64_t at = 0; at < n;) {
    const uint64_t len = size ? size : min_length + uint64_t(std::pow(span, u(rng) * u(rng))) - 1;
    at = std::min(n, at + len);
    offsets.push_back(uint32_t(at));
  }
  return offsets;
}

// The segmented sorts' "splat" shape: power-law lengths from 1 to 2^14 keys, as a splatting renderer's
// tiles (about 197 keys on average, so about 2^16 segments over 2^24 keys).
inline std::vector<uint32_t> splat_segment_offsets(uint64_t n, std::mt19937_64& rng) {
  return segment_offsets(n, 0, 16385.0, 1, rng);
}

}  // namespace vkprim::tools
