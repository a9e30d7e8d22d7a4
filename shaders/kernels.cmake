# Every kernel and its variants (see cmake/VkprimShaders.cmake). The operator of reduce and scan kernels is
# specialization constant 5 (common/types.glsl), so their variants are the element type and the emulation,
# and for float types with subgroups the operator (OPERATOR).

foreach(alg interleaved_divergent interleaved_strided sequential first_add_during_load)
  vkprim_add_kernel(reduce/${alg} reduce/${alg}.comp TYPES ${VKPRIM_ALL_TYPES} OPERATOR)
endforeach()
foreach(alg unrolled_subgroup unrolled_complete grid_stride)
  vkprim_add_kernel(reduce/${alg} reduce/${alg}.comp TYPES ${VKPRIM_ALL_TYPES} OPERATOR
                    NO_SUBGROUP_VARIANT)
endforeach()

vkprim_add_kernel(ceiling/copy ceiling/copy.comp)
vkprim_add_kernel(ceiling/read ceiling/read.comp)

# GPU-driven counts: the dispatch arguments of record_indirect (shaders/indirect/args.comp).
vkprim_add_kernel(indirect/args indirect/args.comp)

# Scan (shaders/scan): one kernel per phase.
foreach(phase hillis_steele blelloch_upsweep blelloch_downsweep blelloch_block add_carry)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} OPERATOR)
endforeach()
foreach(phase subgroup_block reduce_then_scan_reduce reduce_then_scan_scan)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} OPERATOR
                    NO_SUBGROUP_VARIANT)
endforeach()

# Chained scans (shaders/scan/chained.comp): the Vulkan memory model needs SPIR-V 1.5 (vulkan1.2).
# Tile state split in 16-bit parts for every type, or one 64-bit atomic word for 32-bit types.
vkprim_add_kernel(scan/chained_lookback scan/chained.comp TYPES ${VKPRIM_ALL_TYPES} OPERATOR
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2)
vkprim_add_kernel(scan/chained_fallback scan/chained.comp TYPES ${VKPRIM_ALL_TYPES} OPERATOR
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_FALLBACK=1)
vkprim_add_kernel(scan/chained_lookback64 scan/chained.comp TYPES u32 i32 f32 OPERATOR
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1)
vkprim_add_kernel(scan/chained_fallback64 scan/chained.comp TYPES u32 i32 f32 OPERATOR
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1 VKPRIM_FALLBACK=1)

# Stream compaction (shaders/select, src/select.cpp): the predicate is a push constant, so the variants
# are the element type. Chained single pass (Vulkan memory model: vulkan1.2;
# state in 16-bit parts, or one 64-bit word with shaderBufferInt64Atomics), the portable
# count/scan/scatter passes, and Partition's copy of the rejected elements (by element width only).
vkprim_add_kernel(select/chained select/chained.comp TYPES ${VKPRIM_ALL_TYPES}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2)
vkprim_add_kernel(select/chained64 select/chained.comp TYPES ${VKPRIM_ALL_TYPES}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1)
# Partition's chained pass: the rejected elements' code compiled in only here, so Select's kernel holds no
# registers for it through the look-back (one kernel for both measured 7% slower Select at 2^28, H100).
vkprim_add_kernel(select/partition_chained select/chained.comp TYPES ${VKPRIM_ALL_TYPES}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_PARTITION=1)
vkprim_add_kernel(select/partition_chained64 select/chained.comp TYPES ${VKPRIM_ALL_TYPES}
                  NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1 VKPRIM_PARTITION=1)
foreach(phase tile_count scatter)
  vkprim_add_kernel(select/${phase} select/${phase}.comp TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT)
endforeach()
vkprim_add_kernel(select/scan_counts select/scan_counts.comp TYPES u32 WIDTHS_ONLY NO_SUBGROUP_VARIANT)
vkprim_add_kernel(select/copy_rejected select/copy_rejected.comp TYPES u32 u64 WIDTHS_ONLY)

# Radix sort (shaders/sort, src/sort.cpp): keys travel as raw bits, so variants are the key width (suffix
# _k8, _k16, _k32, _k64) and the payload (none, _v32, _v64, or wide values _vw1 / _vw4 in units of 1 or 4
# words, their count specialization constant 6); the key transform is a specialization constant.
# Onesweep digit passes run under the Vulkan memory model (vulkan1.2). SortRanking::partitioned (suffix _p)
# and SortScatter::direct (suffix _d), which automatic never picks, are built for 32- and 64-bit keys under
# the option VKPRIM_SORT_OPTION_KERNELS only; every default kernel also gets the no-subgroup variant. The one-workgroup sort (sort/single) takes keys with no payload or 4- and 8-byte ones.
foreach(kw 8 16 32 64)
  set(key_defines "")
  if(kw EQUAL 64)
    set(key_defines VKPRIM_KEY64=1)
  elseif(kw LESS 32)
    set(key_defines VKPRIM_KEY${kw}=1)
  endif()
  vkprim_add_kernel(sort/histogram_k${kw} sort/histogram.comp DEFINES ${key_defines})
  vkprim_add_kernel(sort/upsweep_k${kw} sort/upsweep.comp DEFINES ${key_defines})
  foreach(vw 0 32 64 w1 w4)
    set(suffix k${kw})
    if(vw MATCHES "^w")
      set(suffix k${kw}_v${vw})
      string(SUBSTRING ${vw} 1 1 unit)
      set(defines ${key_defines} VKPRIM_VALUE_UNIT=${unit})
    else()
      if(NOT vw EQUAL 0)
        set(suffix k${kw}_v${vw})
      endif()
      math(EXPR value_words "${vw} / 32")
      set(defines ${key_defines} VKPRIM_VALUE_WORDS=${value_words})
    endif()
    set(ranks "")
    set(scatters "")
    if(kw GREATER 16 AND VKPRIM_SORT_OPTION_KERNELS)
      set(ranks _p)
      set(scatters _d)
    endif()
    foreach(rank "" ${ranks})
      foreach(scatter "" ${scatters})
        set(extra "")
        set(nosg "")
        if(rank STREQUAL "_p")
          list(APPEND extra VKPRIM_PARTITIONED=1)
        endif()
        if(scatter STREQUAL "_d")
          list(APPEND extra VKPRIM_DIRECT_SCATTER=1)
        endif()
        if(rank STREQUAL "")
          set(nosg NO_SUBGROUP_VARIANT)
        endif()
        vkprim_add_kernel(sort/onesweep_${suffix}${rank}${scatter} sort/onesweep.comp ${nosg} TARGET_ENV vulkan1.2
                          DEFINES ${defines} ${extra})
        vkprim_add_kernel(sort/downsweep_${suffix}${rank}${scatter} sort/downsweep.comp ${nosg}
                          DEFINES ${defines} ${extra})
      endforeach()
    endforeach()
    vkprim_add_kernel(sort/copy_${suffix} sort/copy.comp DEFINES ${defines})
    if(NOT vw MATCHES "^w")
      vkprim_add_kernel(sort/single_${suffix} sort/single.comp NO_SUBGROUP_VARIANT DEFINES ${defines})
    endif()
  endforeach()
endforeach()
vkprim_add_kernel(sort/scan sort/scan.comp NO_SUBGROUP_VARIANT)

# Test-only kernels: the tile-state litmus test.
vkprim_add_kernel(test/litmus test/litmus.comp TYPES u32 u64 WIDTHS_ONLY TARGET_ENV vulkan1.2)
vkprim_add_kernel(test/litmus64 test/litmus.comp TYPES u32 WIDTHS_ONLY TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1)

# Keyed primitives (shaders/by_key, src/by_key.cpp): ReduceByKey, ScanByKey, RunLengthEncode,
# NonTrivialRuns and Unique share one single-pass kernel (the primitive is specialization constant 3, the
# operator constant 5). Variants: the value type (RunLengthEncode, NonTrivialRuns and Unique use u32) and
# the key width (keys are compared as bits: _k32 for u32/i32/f32, _k64 for u64/i64/f64).
vkprim_add_kernel(by_key/chained_k32 by_key/chained.comp TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT
                  TARGET_ENV vulkan1.2)
vkprim_add_kernel(by_key/chained_k64 by_key/chained.comp TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT
                  TARGET_ENV vulkan1.2 DEFINES VKPRIM_KEY64=1)
# The tile state in 64-bit words where shaderBufferInt64Atomics is enabled (half the atomics of 16-bit
# parts; common/run_state.glsl), for plans that use subgroups.
vkprim_add_kernel(by_key/chained64_k32 by_key/chained.comp TYPES ${VKPRIM_ALL_TYPES} TARGET_ENV vulkan1.2
                  DEFINES VKPRIM_STATE64=1)
vkprim_add_kernel(by_key/chained64_k64 by_key/chained.comp TYPES ${VKPRIM_ALL_TYPES} TARGET_ENV vulkan1.2
                  DEFINES VKPRIM_KEY64=1 VKPRIM_STATE64=1)
# The portable reduce_then_scan (no memory model): the same kernel without tile state, in three phases.
vkprim_add_kernel(by_key/portable_k32 by_key/chained.comp TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT
                  DEFINES VKPRIM_BY_KEY_PORTABLE=1)
vkprim_add_kernel(by_key/portable_k64 by_key/chained.comp TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT
                  DEFINES VKPRIM_KEY64=1 VKPRIM_BY_KEY_PORTABLE=1)
