// vkprim::version() and the VKPRIM_VERSION_* macros against project(vkprim VERSION ...) in CMakeLists.txt,
// which CMake passes in as VKPRIM_EXPECTED_VERSION ("major.minor.patch").
#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include "vkprim/version.hpp"
#include "vkprim/vkprim.hpp"

#ifndef VKPRIM_EXPECTED_VERSION
#error "tests/CMakeLists.txt passes VKPRIM_EXPECTED_VERSION, the CMake project version"
#endif

TEST_CASE("version() is the CMake project version", "[version]") {
  const vkprim::Version v = vkprim::version();
  const std::string expected = VKPRIM_EXPECTED_VERSION;
  INFO("CMake project version " << expected << ", vkprim::version() " << v.string);
  CHECK(std::string(v.string) == expected);
  CHECK(std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch) == expected);
}

TEST_CASE("the headers' version macros are the library's version", "[version]") {
  const vkprim::Version v = vkprim::version();
  CHECK(v.major == VKPRIM_VERSION_MAJOR);
  CHECK(v.minor == VKPRIM_VERSION_MINOR);
  CHECK(v.patch == VKPRIM_VERSION_PATCH);
  CHECK(std::string(v.string) == VKPRIM_VERSION_STRING);
}
