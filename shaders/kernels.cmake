# Every kernel and its variants (see cmake/VkprimShaders.cmake).
set(VKPRIM_ALL_TYPES u32 i32 f32 u64 i64 f64)
set(VKPRIM_ALL_OPS add min max bit_and bit_or bit_xor)

foreach(alg interleaved_divergent interleaved_strided sequential first_add_during_load)
  vkprim_add_kernel(reduce/${alg} reduce/${alg}.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS})
endforeach()
foreach(alg unrolled_subgroup unrolled_complete grid_stride)
  vkprim_add_kernel(reduce/${alg} reduce/${alg}.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS}
                    NO_SUBGROUP_VARIANT)
endforeach()

vkprim_add_kernel(ceiling/copy ceiling/copy.comp)
vkprim_add_kernel(ceiling/read ceiling/read.comp)

# Scan (shaders/scan): one kernel per phase.
foreach(phase hillis_steele blelloch_upsweep blelloch_downsweep blelloch_block add_carry)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS})
endforeach()
foreach(phase subgroup_block reduce_then_scan_reduce reduce_then_scan_scan)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS}
                    NO_SUBGROUP_VARIANT)
endforeach()
