// `vkprim bench reduce_by_key | scan_by_key | rle | non_trivial_runs | unique` (tools/bench_by_key.cpp).
#pragma once

#include <string>
#include <vector>

namespace vkprim::tools {

// Whether `name` (the word after "bench") is one of the keyed primitives' benches.
bool is_by_key_bench(const std::string& name);
// args: what follows "bench <name>". Returns the process exit code.
int run_bench_by_key(const std::string& name, std::vector<std::string> args);

}  // namespace vkprim::tools
