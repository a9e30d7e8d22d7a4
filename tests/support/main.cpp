// The test runner shared by every test executable: Catch2's implementation and session. It is compiled
// once, without optimization and without sanitizers, and linked into every test executable, the
// sanitizer builds included (tests/CMakeLists.txt): Catch2's implementation is the largest translation
// unit of the tests (about 40 s at -O2, 125 s with AddressSanitizer) and is none of vkprim's code.
// The validation listener and the device teardown live in listener.cpp, built with each runtime.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

namespace vkprim::test {
int finish_run(int result);  // listener.cpp
}  // namespace vkprim::test

int main(int argc, char** argv) { return vkprim::test::finish_run(Catch::Session().run(argc, argv)); }
