// A listener that starts every test case with empty validation-message lists and flags messages a test
// case left unchecked, and an orderly teardown of the cached devices once the session ends (main.cpp).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstdio>

#include "test_support.hpp"

namespace {

bool g_unchecked_messages = false;
// Test cases run, and those among them that reported a skip (test::skip) and asserted nothing.
int g_cases = 0, g_empty_skipped = 0;
int g_skips_at_start = 0;

struct ValidationListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    TestEventListenerBase::testCaseStarting(info);
    ++g_cases;
    g_skips_at_start = vkprim::test::skip_count();
    // A failure in an earlier test case must not leak its messages into this one.
    for (vkprim::Device* dev : vkprim::test::cached_devices()) dev->clear_validation_messages();
  }
  // Every test case ends with REQUIRE_NO_VALIDATION_MESSAGES; this is the safety net for one that
  // forgot (or returned early): messages still present fail the run through main's exit code.
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (vkprim::test::skip_count() > g_skips_at_start && stats.totals.assertions.total() == 0) ++g_empty_skipped;
    for (vkprim::Device* dev : vkprim::test::cached_devices()) {
      if (dev->validation_message_count() == 0) continue;
      g_unchecked_messages = true;
      std::fprintf(stderr, "validation messages at the end of test case '%s':\n%s", stats.testInfo.name.c_str(),
                   vkprim::test::describe_messages(*dev).c_str());
    }
    TestEventListenerBase::testCaseEnded(stats);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(ValidationListener)

namespace vkprim::test {

// Called by main with the session's result: destroys the cached devices and fails the run where a test
// case left validation messages unchecked. A run whose every test case skipped itself without asserting
// anything exits with kSkipExitCode, which ctest reports as skipped (SKIP_RETURN_CODE), not passed.
int finish_run(int result) {
  release_devices();
  if (g_unchecked_messages && result == 0) result = 1;
  if (result == 0 && g_cases > 0 && g_empty_skipped == g_cases) {
    std::fprintf(stderr, "every test case run skipped itself: exit %d (skipped)\n", kSkipExitCode);
    result = kSkipExitCode;
  }
  return result;
}

}  // namespace vkprim::test
