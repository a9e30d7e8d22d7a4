// `vkprim bench sort`, `vkprim bench scatter` and the sort part of `vkprim verify`.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// args: what follows "bench sort". Returns the process exit code.
int run_bench_sort(std::vector<std::string> args);
// args: what follows "bench scatter" (the scatter ceiling of a radix digit pass). Returns the process exit code.
int run_bench_scatter(std::vector<std::string> args);
// Both sort algorithms x key types x keys/pairs x orders at a few sizes against std::stable_sort; prints
// failures and a summary line. Returns the number of failures.
int verify_sort(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
