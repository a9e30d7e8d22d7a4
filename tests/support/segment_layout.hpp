// Segment layouts of the segmented-primitive tests (test_segmented_reduce, test_segmented_sort): begin and end
// offsets laid end to end, or with gaps, shuffled and overlapping, and power-law segment lengths.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace vkprim::test {

// Segment s is [begin[s], end[s]) of the input.
struct Layout {
  std::vector<uint32_t> begin, end;
  uint64_t elements = 0;  // input elements the layout spans
  size_t size() const { return begin.size(); }
};

// How segments lie in the input: end to end in index order (CSR), or with gaps, in shuffled order, and
// some of them again over others' elements.
struct Arrangement {
  bool gaps = false, shuffled = false, overlapping = false;
};

inline Layout lay_out(const std::vector<uint64_t>& lengths, const Arrangement& how, std::mt19937_64& rng) {
  Layout l;
  uint64_t at = 0;
  for (uint64_t n : lengths) {
    if (how.gaps && rng() % 3 == 0) at += rng() % 5;
    l.begin.push_back(uint32_t(at));
    l.end.push_back(uint32_t(at + n));
    at += n;
  }
  l.elements = std::max<uint64_t>(at, 1);
  if (how.overlapping)  // every fourth segment moves onto a random earlier position, its length kept
    for (size_t s = 3; s < l.size(); s += 4) {
      const uint32_t n = l.end[s] - l.begin[s];
      l.begin[s] = uint32_t(rng() % (l.elements - std::min<uint64_t>(n, l.elements - 1)));
      l.end[s] = l.begin[s] + n;
    }
  if (how.shuffled) {
    std::vector<size_t> order(l.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::shuffle(order.begin(), order.end(), rng);
    Layout shuffled = l;
    for (size_t s = 0; s < order.size(); ++s) {
      shuffled.begin[s] = l.begin[order[s]];
      shuffled.end[s] = l.end[order[s]];
    }
    return shuffled;
  }
  return l;
}

// `segments` segments of `length` elements end to end from element 0.
inline Layout uniform_layout(uint64_t segments, uint64_t length) {
  Layout l;
  for (uint64_t s = 0; s < segments; ++s) {
    l.begin.push_back(uint32_t(s * length));
    l.end.push_back(uint32_t((s + 1) * length));
  }
  l.elements = segments * length;
  return l;
}

// Power-law lengths: most segments a few elements, a few thousands of them.
inline std::vector<uint64_t> power_law_lengths(size_t count, uint64_t largest, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<uint64_t> out(count);
  for (auto& n : out) n = uint64_t(std::pow(double(largest + 1), u(rng) * u(rng))) - 1;
  return out;
}

}  // namespace vkprim::test
