// `vkprim bench select` and the select part of `vkprim verify`.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// args: what follows "bench select". Returns the process exit code.
int run_bench_select(std::vector<std::string> args);
// Select and Partition x every algorithm the device accepts x type x predicate at a few sizes against the
// CPU; prints failures and a summary line. Returns the number of failures.
int verify_select(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
