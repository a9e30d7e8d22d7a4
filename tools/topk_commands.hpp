// `vkprim bench topk`.
#pragma once

#include <string>
#include <vector>

namespace vkprim::tools {

// args: what follows "bench topk". Returns the process exit code.
int run_bench_topk(std::vector<std::string> args);

}  // namespace vkprim::tools
