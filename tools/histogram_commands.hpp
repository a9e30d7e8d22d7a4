// `vkprim bench histogram`.
#pragma once

#include <string>
#include <vector>

namespace vkprim::tools {

// args: what follows "bench histogram". Returns the process exit code.
int run_bench_histogram(std::vector<std::string> args);

}  // namespace vkprim::tools
