// Scan row vectors: ROW_T holds one value per row of a tile (up to four rows), so a single workgroup
// scan of ROW_T values scans up to four rows at once (the rows' scans run side by side in the vector
// components; the rows are then chained serially).
// Requires the defines of common/types.glsl (VKPRIM_TYPE_*).
// Provides: ROW_T, ROW_N (4; 1 for user types), vk_row_op(a, b) (componentwise vk_op), vk_row_identity().
#ifndef VKPRIM_SCAN_TYPES_GLSL
#define VKPRIM_SCAN_TYPES_GLSL

#include "common/types.glsl"

#if defined(VKPRIM_TYPE_U32)
#define ROW_T uvec4
#elif defined(VKPRIM_TYPE_I32)
#define ROW_T ivec4
#elif defined(VKPRIM_TYPE_F32)
#define ROW_T vec4
#elif defined(VKPRIM_TYPE_U64)
#define ROW_T u64vec4
#elif defined(VKPRIM_TYPE_I64)
#define ROW_T i64vec4
#elif defined(VKPRIM_TYPE_F64)
#define ROW_T dvec4
#endif

#if defined(VKPRIM_TYPE_USER)
// User types scan one value per invocation (common/blocked_tile.glsl): a row of one, so r[0] reads as
// for the vectors.
#define ROW_T VALUE_T[1]
#define ROW_N 1u
ROW_T vk_row_op(ROW_T a, ROW_T b) { return ROW_T(vk_op(a[0], b[0])); }
ROW_T vk_row_identity() { return ROW_T(vk_identity()); }
#else
#define ROW_N 4u
ROW_T vk_row_op(ROW_T a, ROW_T b) { VK_OP_BODY(a, b) }

ROW_T vk_row_identity() { return ROW_T(vk_identity()); }
#endif

#endif  // VKPRIM_SCAN_TYPES_GLSL
