// `vkprim bench segmented_reduce`, `vkprim bench segmented_sort` and `vkprim verify`'s segmented-reduce part.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "host_reference.hpp"
#include "segment_shapes.hpp"
#include "vkprim/device.hpp"
#include "vkprim/segmented_reduce.hpp"

namespace vkprim::tools {

// args: what follows "bench segmented_reduce". Returns the process exit code.
int run_bench_segmented(std::vector<std::string> args);
// args: what follows "bench segmented_sort" (tools/bench_segmented_sort.cpp). Returns the process exit code.
int run_bench_segmented_sort(std::vector<std::string> args);

// One segment's result against the host reduction `want` of its len elements x: integers and float min/max
// bit for bit, float add within the plan's documented bound (the bench and verify).
template <class T>
bool same_result(const SegmentedReduce& plan, const T* x, uint64_t len, T got, T want) {
  if constexpr (std::is_floating_point_v<T>) {
    if (plan.desc().op == Op::add) {
      const auto exact = host::exact_sum(x, len);
      return std::fabs((long double)got - exact.exact) <= host::float_add_bound(exact, len, plan.sequential_run(len));
    }
  }
  return host::same_bits(got, want);
}

// `vkprim verify`'s segmented-reduce part: prints a summary line and each failure; returns the failures.
int verify_segmented_reduce(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
