// `vkprim bench reduce_by_key | scan_by_key | rle | non_trivial_runs | unique` and the keyed part of
// `vkprim verify` (tools/bench_by_key.cpp).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

// Whether `name` (the word after "bench") is one of the keyed primitives' benches.
bool is_by_key_bench(const std::string& name);
// args: what follows "bench <name>". Returns the process exit code.
int run_bench_by_key(const std::string& name, std::vector<std::string> args);
// Every keyed primitive on u32 keys at a few sizes and run lengths against the CPU (`vkprim verify`); prints
// failures and a summary line. Returns the number of failures.
int verify_by_key(const Device& device, std::mt19937_64& rng);

}  // namespace vkprim::tools
