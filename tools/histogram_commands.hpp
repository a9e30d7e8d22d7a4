// `vkprim bench histogram` and `vkprim verify`'s histogram part.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// args: what follows "bench histogram". Returns the process exit code.
int run_bench_histogram(std::vector<std::string> args);

// `vkprim verify`'s histogram part: prints a summary line and each failure; returns the failures.
int verify_histogram(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
