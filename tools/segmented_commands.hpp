// `vkprim bench segmented_reduce`.
#pragma once

#include <string>
#include <vector>

namespace vkprim::tools {

// args: what follows "bench segmented_reduce". Returns the process exit code.
int run_bench_segmented(std::vector<std::string> args);

}  // namespace vkprim::tools
