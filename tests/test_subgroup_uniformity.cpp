// The look-backs run in subgroup 0 alone, where lanes that branch apart need not meet again before the
// next subgroup operation (docs/ALGORITHMS.md, "Reconvergence"): no embedded kernel's look_back branches
// on a value that differs between lanes (support/spirv_uniformity.hpp). No device needed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "look_back_control_comp.h"
#include "shader_groups.hpp"
#include "spirv_uniformity.hpp"

using namespace vkprim::detail;

TEST_CASE("the check flags a look_back that branches on the lane and passes one that branches on a ballot",
          "[uniformity]") {
  const std::vector<uint32_t> control(std::begin(look_back_control), std::end(look_back_control));
  const auto found = vkprim::test::divergent_look_back_branches(control);
  REQUIRE(found.size() == 1);
  CHECK(found[0].function.rfind("look_back(", 0) == 0);
}

TEST_CASE("no embedded look-back branches on a value that differs between the lanes of a subgroup",
          "[uniformity]") {
  vkprim::test::LookBackReport report;
  for (const ShaderGroup* group : {&kShaderGroup_scan, &kShaderGroup_select, &kShaderGroup_by_key})
    vkprim::test::check_look_backs(*group, "", report);
  CHECK(report.unpacked);
  for (const std::string& branch : report.divergent) FAIL_CHECK(branch);
  // The chained scan, select and keyed kernels, each in several variants: a module whose functions lost
  // their names would be checked for nothing.
  CHECK(report.modules_with_look_back >= 30);
}
