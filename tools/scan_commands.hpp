// `vkprim bench scan` and the scan part of `vkprim verify`.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// args: what follows "bench scan". Returns the process exit code.
int run_bench_scan(std::vector<std::string> args);
// Every scan algorithm x kind x type x op at a few sizes against the CPU; prints failures and a summary
// line. Returns the number of failures.
int verify_scan(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
