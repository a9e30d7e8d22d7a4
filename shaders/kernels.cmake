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

# GPU-driven counts: the dispatch arguments of record_indirect (shaders/indirect/args.comp).
vkprim_add_kernel(indirect/args indirect/args.comp)

# Scan (shaders/scan): one kernel per phase.
foreach(phase hillis_steele blelloch_upsweep blelloch_downsweep blelloch_block add_carry)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS})
endforeach()
foreach(phase subgroup_block reduce_then_scan_reduce reduce_then_scan_scan)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS}
                    NO_SUBGROUP_VARIANT)
endforeach()

# Chained scans (shaders/scan/chained.comp): the Vulkan memory model needs SPIR-V 1.5 (vulkan1.2).
# Tile state split in 16-bit parts for every type, or one 64-bit atomic word for 32-bit types.
vkprim_add_kernel(scan/chained_lookback scan/chained.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2)
vkprim_add_kernel(scan/chained_fallback scan/chained.comp TYPES ${VKPRIM_ALL_TYPES} OPS ${VKPRIM_ALL_OPS}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_FALLBACK=1)
vkprim_add_kernel(scan/chained_lookback64 scan/chained.comp TYPES u32 i32 f32 OPS ${VKPRIM_ALL_OPS}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1)
vkprim_add_kernel(scan/chained_fallback64 scan/chained.comp TYPES u32 i32 f32 OPS ${VKPRIM_ALL_OPS}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1 VKPRIM_FALLBACK=1)

# Test-only kernels: the tile-state litmus test.
vkprim_add_kernel(test/litmus test/litmus.comp TYPES u32 u64 OPS add TARGET_ENV vulkan1.2)
vkprim_add_kernel(test/litmus64 test/litmus.comp TYPES u32 OPS add TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1)
