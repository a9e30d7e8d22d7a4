// What the generated kernel list (kernel_names.hpp, from shaders/kernels.cmake) says of each kernel.
#pragma once

#include <cstdint>

namespace vkprim::detail {

// Specialization constant IDs: one meaning each, in every kernel (the constant_id of shaders/, listed in
// common/config.glsl). A test reads every embedded module's IDs back (test_shader_registry).
enum class SpecId : uint32_t {
  wg_size = 0,
  items = 1,
  look_windows = 2,
  key_flags = 3,
  stage_rounds = 4,
  vk_op = 5,
  value_units = 6,
  subgroup_min = 7,
  phase = 8,
  mode = 9,
  rejected_order = 10,
  channels = 11,
  bin_mode = 12,
  shared_words = 13,
};
constexpr uint32_t kSpecIds = 14;
// The GLSL names, by ID (errors and tests).
constexpr const char* kSpecNames[kSpecIds] = {"WG_SIZE",     "ITEMS",       "LOOK_WINDOWS", "KEY_FLAGS",
                                              "STAGE_ROUNDS", "VK_OP",      "VALUE_UNITS",  "SUBGROUP_MIN",
                                              "PHASE",       "MODE",        "REJECTED_ORDER", "CHANNELS",
                                              "BIN_MODE",    "SHARED_WORDS"};
constexpr uint32_t spec_bit(SpecId id) { return 1u << uint32_t(id); }

struct KernelInfo {
  const char* name;     // "scan/chained_lookback"
  const char* group;    // "scan": the group a build embeds it in (shader_groups.hpp)
  uint32_t bindings;    // storage buffers at set 0, bindings 0..n-1
  uint32_t push_bytes;  // push constants, compute stage
  uint32_t constants;   // spec_bit of every specialization constant it declares
  // False where the library embeds no variant of it: a build option leaves it out (VKPRIM_SORT_OPTION_KERNELS,
  // VKPRIM_TYPES), or only user operators build it (vkprim_add_operator). The name stays valid in C++: a plan
  // that asks for it fails at run time, as for any variant not built.
  bool embedded;
};

}  // namespace vkprim::detail
