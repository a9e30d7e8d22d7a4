// `vkprim bench segmented_reduce`.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// args: what follows "bench segmented_reduce". Returns the process exit code.
int run_bench_segmented(std::vector<std::string> args);

// `vkprim verify`'s segmented-reduce part: prints a summary line and each failure; returns the failures.
int verify_segmented_reduce(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
