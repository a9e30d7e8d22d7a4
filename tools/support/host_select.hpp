// Host-side reference of stream compaction (vkprim/select.hpp): the predicate as the GPU evaluates it,
// Select as std::copy_if and Partition as std::stable_partition, and random flags. Shared by the tests,
// `vkprim verify` and `vkprim bench select`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "vkprim/select.hpp"

namespace vkprim::host {

// The predicate as the GPU evaluates it (IEEE: a NaN on either side makes only not_equal true).
template <class T>
bool select_keep(SelectPredicate p, T v, uint32_t flag, T rhs) {
  if (p == SelectPredicate::flagged) return flag != 0;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v) || std::isnan(rhs)) return p == SelectPredicate::not_equal;
  }
  switch (p) {
    case SelectPredicate::less: return v < rhs;
    case SelectPredicate::less_equal: return v <= rhs;
    case SelectPredicate::greater: return v > rhs;
    case SelectPredicate::greater_equal: return v >= rhs;
    case SelectPredicate::equal: return v == rhs;
    default: return !(v == rhs);
  }
}

// The kept elements of data[0, n) in order (std::copy_if), or all of them partitioned, kept ones first
// (std::stable_partition); `kept` = how many the predicate keeps. flags: null reads as all zero.
template <class T>
std::vector<T> compact(SelectPredicate p, const T* data, const uint32_t* flags, uint64_t n, T rhs, bool partition,
                       uint64_t& kept) {
  auto keep = [&](uint64_t i) { return select_keep(p, data[i], flags ? flags[i] : 0u, rhs); };
  std::vector<T> out;
  out.reserve(n);
  if (partition) {
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), uint64_t(0));
    kept = uint64_t(std::stable_partition(order.begin(), order.end(), keep) - order.begin());
    for (uint64_t i : order) out.push_back(data[i]);
  } else {
    for (uint64_t i = 0; i < n; ++i)
      if (keep(i)) out.push_back(data[i]);
    kept = out.size();
  }
  return out;
}

template <class T>
std::vector<T> compact(SelectPredicate p, const std::vector<T>& data, const std::vector<uint32_t>& flags, T rhs,
                       bool partition, uint64_t& kept) {
  return compact(p, data.data(), flags.empty() ? nullptr : flags.data(), data.size(), rhs, partition, kept);
}

// A partition's elements with the rejected side (from `kept` on) reversed: RejectedOrder::reversed.
template <class T>
std::vector<T> reverse_rejected(std::vector<T> partitioned, uint64_t kept) {
  if (kept < partitioned.size()) std::reverse(partitioned.begin() + std::ptrdiff_t(kept), partitioned.end());
  return partitioned;
}

// Flags with about `percent` % set (0 and 100 exact), set flags holding arbitrary non-zero values.
inline std::vector<uint32_t> random_flags(uint64_t n, double percent, std::mt19937_64& rng) {
  std::vector<uint32_t> f(n);
  std::uniform_real_distribution<double> u(0, 100);
  for (auto& x : f) x = u(rng) < percent ? uint32_t(rng() | 1u) : 0u;
  return f;
}

}  // namespace vkprim::host
