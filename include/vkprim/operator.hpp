// vkprim/operator.hpp — user operators: an engine's own element type and associative combine function,
// compiled into vkprim's reduce, segmented reduce, scan and keyed kernels at the engine's build time.
//
// Declared in CMake (cmake/VkprimOperators.cmake, available after find_package(vkprim) or
// add_subdirectory):
//   vkprim_add_operator(TARGET my_engine NAME aabb_union
//                       TYPE_GLSL "struct Aabb { vec3 lo; vec3 hi; }"
//                       IDENTITY "Aabb(vec3(1.0 / 0.0), vec3(-1.0 / 0.0))"
//                       COMBINE aabb_union.glsl)   # defines Aabb combine(Aabb a, Aabb b)
// compiles the kernels for it (glslang, spirv-val; about 350 KB packed per operator), embeds them in
// my_engine and generates
// <vkprim_ops/aabb_union.hpp>: `const vkprim::UserOperator& vkprim_ops::aabb_union()` and
// `struct vkprim_ops::Aabb`, the element's layout in buffers (std430) as C++.
// The struct's members are 32-bit scalars and vectors (float, int, uint, vec2..4, ivec2..4, uvec2..4)
// or fixed arrays of them, up to 64 bytes in all.
//
// Pass the operator in ReduceDesc, SegmentedReduceDesc, ScanDesc, ReduceByKeyDesc or ScanByKeyDesc (user_operator); the plan then
// ignores the value type and `op`, and elements are `size` bytes: buffer offsets must be multiples of it. The operator must be associative; it need not be commutative: every plan gives the
// left-to-right combination x[0] op x[1] op ... (the kernels never reorder operands). identity op x ==
// x op identity == x is assumed, and padding past the count is the identity.
// Float members follow the float rules of the plans: reduce_then_scan and Reduce combine in a tree fixed
// by the plan and the count (bit-identical run to run), the chained scans group predecessors by timing.
// Scan's automatic choice may be a chained scan (values of at most 16 bytes, max_count >= 2^20: scan.hpp);
// ScanDesc::deterministic keeps it on reduce_then_scan.
// Portability: the kernels call combine inside code that only one subgroup runs and follow it with
// shuffles. A combine that branches on its operands relies there on the driver reconverging the lanes at
// the branch's end, which the core specification does not promise (docs/ALGORITHMS.md, "Reconvergence").
// A combine without branches in its SPIR-V relies on nothing. Build it from mix(), min() and max(), and
// ?: between scalar or vector variables, which glslang compiles to selects. It branches on ?: between
// structs or expressions, and on && and || whose right side is not simple. The samples (tools/operators)
// have no branches: ArgMin tests with any() and all(), Welford selects its divisor.
#pragma once

#include <cstdint>

namespace vkprim {

namespace detail { struct ShaderGroup; }

struct UserOperator {
  const char* name = nullptr;   // as given to vkprim_add_operator(NAME)
  uint32_t size = 0;            // bytes per element in buffers (the std430 array stride), 4..64
  uint32_t words = 0;           // 32-bit words of the value's members (its size without padding)
  const detail::ShaderGroup* kernels = nullptr;  // the operator's compiled kernels (generated)
};

}  // namespace vkprim
