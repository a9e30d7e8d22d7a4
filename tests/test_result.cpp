// Result<T>: value(), ->, * of a failed Result and error() of a successful one abort with the error's
// message in every build type (checked in a forked child, whose stderr and signal the parent reads).
#include <functional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "vkprim/result.hpp"

using namespace vkprim;

namespace {

Result<int> failed() { return Error{Status::invalid_argument, VK_SUCCESS, "Select::create: max_count is 0"}; }

}  // namespace

TEST_CASE("value() of a failed Result aborts with the error's status and message", "[result]") {
  for (const auto& misuse : std::vector<std::function<void()>>{
           [] { (void)failed().value(); },
           [] {
             const Result<int> r = failed();
             (void)*r.operator->();
           },
           [] {
             Result<int> r = failed();
             (void)*r;
           }}) {
    const test::ChildOutcome out = test::run_in_child(misuse);
    INFO("stderr: " << out.stderr_text);
    CHECK(out.aborted);
    CHECK(out.stderr_text.find("invalid_argument") != std::string::npos);
    CHECK(out.stderr_text.find("Select::create: max_count is 0") != std::string::npos);
  }
}

TEST_CASE("error() of a successful Result aborts with a message", "[result]") {
  const test::ChildOutcome out = test::run_in_child([] {
    const Result<int> r = 7;
    (void)r.error();
  });
  INFO("stderr: " << out.stderr_text);
  CHECK(out.aborted);
  CHECK(out.stderr_text.find("error() called on a successful Result") != std::string::npos);
}

TEST_CASE("a Result used as documented gives its value or its error", "[result]") {
  const Result<int> good = 7;
  REQUIRE(good.ok());
  CHECK(good.value() == 7);
  CHECK(good.status() == Status::success);
  const Result<int> bad = failed();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status() == Status::invalid_argument);
  CHECK(bad.error().message == "Select::create: max_count is 0");
}
