# Every kernel and its variants (see cmake/VkprimShaders.cmake). The operator of reduce and scan kernels is
# specialization constant VK_OP (common/types.glsl), so their variants are the element type and the
# emulation, and for float types with subgroups the operator (OPERATOR). BINDINGS and PUSH_BYTES are each
# kernel's layout, SPEC the specialization constants it declares (common/config.glsl lists their IDs).

# Reduce (common/pass_io.glsl): binding 2 is the record_indirect region of the kernels that have it.
set(reduce BINDINGS 2 PUSH_BYTES 24 SPEC WG_SIZE ITEMS VK_OP)
foreach(alg interleaved_divergent interleaved_strided sequential first_add_during_load)
  vkprim_add_kernel(reduce/${alg} reduce/${alg}.comp ${reduce} TYPES ${VKPRIM_ALL_TYPES} OPERATOR)
endforeach()
foreach(alg unrolled_subgroup unrolled_complete)
  vkprim_add_kernel(reduce/${alg} reduce/${alg}.comp ${reduce} TYPES ${VKPRIM_ALL_TYPES} OPERATOR
                    NO_SUBGROUP_VARIANT)
endforeach()
vkprim_add_kernel(reduce/grid_stride reduce/grid_stride.comp BINDINGS 3 PUSH_BYTES 24 SPEC WG_SIZE ITEMS VK_OP
                  TYPES ${VKPRIM_ALL_TYPES} OPERATOR NO_SUBGROUP_VARIANT)
# The user operators' reduction (ReduceAlgorithm::ordered), which only vkprim_add_operator builds.
vkprim_add_kernel(reduce/ordered reduce/ordered.comp NAME_ONLY BINDINGS 3 PUSH_BYTES 24 SPEC WG_SIZE ITEMS)

# Segmented reduce (shaders/segmented_reduce, common/segment_io.glsl): the first pass (an invocation per
# segment: the short ones, and the lists of the others) and the ranges pass (a subgroup per medium segment, a
# workgroup per chunk of a huge one or per huge segment's partials). The first pass uses no subgroup operation.
set(segmented_reduce BINDINGS 7 PUSH_BYTES 76 SPEC WG_SIZE ITEMS VK_OP TYPES ${VKPRIM_ALL_TYPES})
vkprim_add_kernel(segmented_reduce/segments segmented_reduce/segments.comp ${segmented_reduce})
vkprim_add_kernel(segmented_reduce/ranges segmented_reduce/ranges.comp ${segmented_reduce} OPERATOR NO_SUBGROUP_VARIANT)

vkprim_add_kernel(ceiling/copy ceiling/copy.comp BINDINGS 2 PUSH_BYTES 12 SPEC WG_SIZE ITEMS)
vkprim_add_kernel(ceiling/read ceiling/read.comp BINDINGS 2 PUSH_BYTES 12 SPEC WG_SIZE ITEMS)
vkprim_add_kernel(ceiling/scatter ceiling/scatter.comp BINDINGS 5 PUSH_BYTES 16 SPEC WG_SIZE ITEMS)

# GPU-driven counts: the dispatch arguments of record_indirect (shaders/indirect/args.comp).
vkprim_add_kernel(indirect/args indirect/args.comp BINDINGS 2 PUSH_BYTES 112)

# Scan (shaders/scan, common/scan_io.glsl): one kernel per phase; binding 4 is the record_indirect region of
# the kernels record_indirect runs.
foreach(phase hillis_steele blelloch_upsweep blelloch_downsweep blelloch_block add_carry)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp BINDINGS 4 PUSH_BYTES 32 SPEC WG_SIZE ITEMS VK_OP
                    TYPES ${VKPRIM_ALL_TYPES} OPERATOR)
endforeach()
foreach(phase subgroup_block reduce_then_scan_reduce reduce_then_scan_scan)
  vkprim_add_kernel(scan/${phase} scan/${phase}.comp BINDINGS 5 PUSH_BYTES 32 SPEC WG_SIZE ITEMS VK_OP
                    TYPES ${VKPRIM_ALL_TYPES} OPERATOR NO_SUBGROUP_VARIANT)
endforeach()

# Chained scans (shaders/scan/chained.comp): the Vulkan memory model needs SPIR-V 1.5 (vulkan1.2).
# Tile state split in 16-bit parts for every type, or one 64-bit atomic word for 32-bit types.
set(chained_scan scan/chained.comp BINDINGS 5 PUSH_BYTES 32 SPEC WG_SIZE ITEMS VK_OP LOOK_WINDOWS OPERATOR
    NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2)
vkprim_add_kernel(scan/chained_lookback ${chained_scan} TYPES ${VKPRIM_ALL_TYPES})
vkprim_add_kernel(scan/chained_fallback ${chained_scan} TYPES ${VKPRIM_ALL_TYPES} DEFINES VKPRIM_FALLBACK=1)
vkprim_add_kernel(scan/chained_lookback64 ${chained_scan} TYPES u32 i32 f32 DEFINES VKPRIM_STATE64=1)
vkprim_add_kernel(scan/chained_fallback64 ${chained_scan} TYPES u32 i32 f32
                  DEFINES VKPRIM_STATE64=1 VKPRIM_FALLBACK=1)

# Stream compaction (shaders/select, src/select.cpp): the predicate is a push constant, so the variants
# are the element type. Chained single pass (Vulkan memory model: vulkan1.2;
# state in 16-bit parts, or one 64-bit word with shaderBufferInt64Atomics), the portable
# count/scan/scatter passes, and Partition's copy of the rejected elements (by element width only).
set(select BINDINGS 6 PUSH_BYTES 32 SPEC WG_SIZE ITEMS VK_OP)
set(chained_select select/chained.comp ${select} TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2)
vkprim_add_kernel(select/chained ${chained_select})
vkprim_add_kernel(select/chained64 ${chained_select} DEFINES VKPRIM_STATE64=1)
# Partition's chained pass: the rejected elements' code compiled in only here, so Select's kernel holds no
# registers for it through the look-back (one kernel for both measured 7% slower Select at 2^28, H100).
vkprim_add_kernel(select/partition_chained ${chained_select} SPEC REJECTED_ORDER DEFINES VKPRIM_PARTITION=1)
vkprim_add_kernel(select/partition_chained64 ${chained_select} SPEC REJECTED_ORDER
                  DEFINES VKPRIM_STATE64=1 VKPRIM_PARTITION=1)
foreach(phase tile_count scatter)
  vkprim_add_kernel(select/${phase} select/${phase}.comp ${select} TYPES ${VKPRIM_ALL_TYPES} NO_SUBGROUP_VARIANT)
endforeach()
vkprim_add_kernel(select/scan_counts select/scan_counts.comp ${select} TYPES u32 WIDTHS_ONLY NO_SUBGROUP_VARIANT)
vkprim_add_kernel(select/copy_rejected select/copy_rejected.comp ${select} TYPES u32 u64 WIDTHS_ONLY)

# Radix sort (shaders/sort, src/sort.cpp): keys travel as raw bits, so variants are the key width (suffix
# _k8, _k16, _k32, _k64) and the payload (none, _v32, _v64, or wide values _vw1 / _vw4 in units of 1 or 4
# words, their count specialization constant VALUE_UNITS); the key transform is specialization constant
# KEY_FLAGS. Onesweep digit passes run under the Vulkan memory model (vulkan1.2). SortRanking::partitioned
# (suffix _p) and SortScatter::direct (suffix _d), which automatic never picks, exist for 32- and 64-bit keys
# and are built under the option VKPRIM_SORT_OPTION_KERNELS only (listed always, so src/sort.cpp names them
# in every build); every default kernel also gets the no-subgroup variant. The one-workgroup sort
# (sort/single) takes keys with no payload or 4- and 8-byte ones.
set(sort BINDINGS 6 PUSH_BYTES 48 SPEC WG_SIZE ITEMS SUBGROUP_MIN KEY_FLAGS)
set(sort_ranking ${sort} STAGE_ROUNDS)  # the kernels that rank and stage a tile (SORT_RANKING)
set(option_kernels "")
if(NOT VKPRIM_SORT_OPTION_KERNELS)
  set(option_kernels NAME_ONLY)
endif()
foreach(kw 8 16 32 64)
  set(key_defines "")
  if(kw EQUAL 64)
    set(key_defines VKPRIM_KEY64=1)
  elseif(kw LESS 32)
    set(key_defines VKPRIM_KEY${kw}=1)
  endif()
  vkprim_add_kernel(sort/histogram_k${kw} sort/histogram.comp ${sort} DEFINES ${key_defines})
  vkprim_add_kernel(sort/upsweep_k${kw} sort/upsweep.comp ${sort} DEFINES ${key_defines})
  foreach(vw 0 32 64 w1 w4)
    set(suffix k${kw})
    set(wide "")
    if(vw MATCHES "^w")
      set(suffix k${kw}_v${vw})
      string(SUBSTRING ${vw} 1 1 unit)
      set(defines ${key_defines} VKPRIM_VALUE_UNIT=${unit})
      set(wide SPEC VALUE_UNITS)
    else()
      if(NOT vw EQUAL 0)
        set(suffix k${kw}_v${vw})
      endif()
      math(EXPR value_words "${vw} / 32")
      set(defines ${key_defines} VKPRIM_VALUE_WORDS=${value_words})
    endif()
    set(ranks "")
    set(scatters "")
    if(kw GREATER 16)
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
        set(option "")
        if(NOT "${rank}${scatter}" STREQUAL "")
          set(option ${option_kernels})
        endif()
        vkprim_add_kernel(sort/onesweep_${suffix}${rank}${scatter} sort/onesweep.comp ${sort_ranking} ${wide} ${nosg}
                          ${option} TARGET_ENV vulkan1.2 DEFINES ${defines} ${extra})
        vkprim_add_kernel(sort/downsweep_${suffix}${rank}${scatter} sort/downsweep.comp ${sort_ranking} ${wide}
                          ${nosg} ${option} DEFINES ${defines} ${extra})
      endforeach()
    endforeach()
    vkprim_add_kernel(sort/copy_${suffix} sort/copy.comp ${sort} ${wide} DEFINES ${defines})
    if(NOT vw MATCHES "^w")
      vkprim_add_kernel(sort/single_${suffix} sort/single.comp ${sort_ranking} NO_SUBGROUP_VARIANT DEFINES ${defines})
    endif()
  endforeach()
endforeach()
vkprim_add_kernel(sort/scan sort/scan.comp ${sort} NO_SUBGROUP_VARIANT)

# Segmented sort (shaders/segmented_sort, common/segmented_sort.glsl on common/radix.glsl): classify (the size
# classes and lists; with SEG_ARGS the later passes' dispatch arguments), the batches of small segments (tile: a
# block-wide sort per batch), and the digit passes of the medium segments (downsweep, SEG_MEDIUM) and of the large
# ones (upsweep, scan, downsweep, or with SEG_CHAINED histogram, scan and chained; SEG_COPY copies back after an
# odd number of passes). Variants as the sort's: key width (_k32, _k64) and payload (none, _v32, _v64); the key
# transform is KEY_FLAGS.
set(segmented_sort BINDINGS 8 PUSH_BYTES 128 SPEC WG_SIZE ITEMS SUBGROUP_MIN KEY_FLAGS)
# classify and scan use no subgroup operation (their scans are the shared-memory ones): no SUBGROUP_MIN.
foreach(phase classify scan)
  vkprim_add_kernel(segmented_sort/${phase} segmented_sort/${phase}.comp BINDINGS 8 PUSH_BYTES 128
                    SPEC WG_SIZE ITEMS KEY_FLAGS DEFINES VKPRIM_NO_SUBGROUPS=1)
endforeach()
foreach(kw 32 64)
  set(key_defines "")
  if(kw EQUAL 64)
    set(key_defines VKPRIM_KEY64=1)
  endif()
  foreach(phase upsweep histogram)
    vkprim_add_kernel(segmented_sort/${phase}_k${kw} segmented_sort/${phase}.comp ${segmented_sort} DEFINES ${key_defines})
  endforeach()
  foreach(vw 0 32 64)
    set(suffix k${kw})
    if(NOT vw EQUAL 0)
      set(suffix k${kw}_v${vw})
    endif()
    math(EXPR value_words "${vw} / 32")
    foreach(phase tile downsweep)
      vkprim_add_kernel(segmented_sort/${phase}_${suffix} segmented_sort/${phase}.comp ${segmented_sort} STAGE_ROUNDS
                        NO_SUBGROUP_VARIANT DEFINES ${key_defines} VKPRIM_VALUE_WORDS=${value_words})
    endforeach()
    vkprim_add_kernel(segmented_sort/chained_${suffix} segmented_sort/chained.comp ${segmented_sort} STAGE_ROUNDS
                      NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES ${key_defines} VKPRIM_VALUE_WORDS=${value_words})
  endforeach()
endforeach()

# Test-only kernels: the tile-state litmus test.
set(litmus test/litmus.comp BINDINGS 3 PUSH_BYTES 12 SPEC WG_SIZE ITEMS VK_OP WIDTHS_ONLY TARGET_ENV vulkan1.2)
vkprim_add_kernel(test/litmus ${litmus} TYPES u32 u64)
vkprim_add_kernel(test/litmus64 ${litmus} TYPES u32 DEFINES VKPRIM_STATE64=1)

# Keyed primitives (shaders/by_key, src/by_key.cpp): ReduceByKey, ScanByKey, RunLengthEncode,
# NonTrivialRuns and Unique share one single-pass kernel (the primitive is specialization constant MODE, the
# operator VK_OP). Variants: the value type (RunLengthEncode, NonTrivialRuns and Unique use u32) and
# the key width (keys are compared as bits: _k32 for u32/i32/f32, _k64 for u64/i64/f64).
set(by_key by_key/chained.comp BINDINGS 7 PUSH_BYTES 32 SPEC WG_SIZE ITEMS VK_OP MODE TYPES ${VKPRIM_ALL_TYPES})
vkprim_add_kernel(by_key/chained_k32 ${by_key} NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2)
vkprim_add_kernel(by_key/chained_k64 ${by_key} NO_SUBGROUP_VARIANT TARGET_ENV vulkan1.2 DEFINES VKPRIM_KEY64=1)
# The tile state in 64-bit words where shaderBufferInt64Atomics is enabled (half the atomics of 16-bit
# parts; common/run_state.glsl), for plans that use subgroups.
vkprim_add_kernel(by_key/chained64_k32 ${by_key} TARGET_ENV vulkan1.2 DEFINES VKPRIM_STATE64=1)
vkprim_add_kernel(by_key/chained64_k64 ${by_key} TARGET_ENV vulkan1.2 DEFINES VKPRIM_KEY64=1 VKPRIM_STATE64=1)
# The portable reduce_then_scan (no memory model): the same kernel without tile state, in three phases
# (specialization constant PHASE).
vkprim_add_kernel(by_key/portable_k32 ${by_key} SPEC PHASE NO_SUBGROUP_VARIANT DEFINES VKPRIM_BY_KEY_PORTABLE=1)
vkprim_add_kernel(by_key/portable_k64 ${by_key} SPEC PHASE NO_SUBGROUP_VARIANT
                  DEFINES VKPRIM_KEY64=1 VKPRIM_BY_KEY_PORTABLE=1)

# Histogram (shaders/histogram, common/histogram.glsl, src/histogram.cpp): the variants are the samples'
# storage, u8, u16, u32 (also i32's, through an order-preserving xor) and f32, built whatever VKPRIM_TYPES says
# (WIDTHS_ONLY); channels, the binning and the shared array are specialization constants, bins and bounds push
# constants. No subgroup operations, so no emulation variant. The privatized kernel adds in shared memory, the
# global one with global atomics; the zero kernel clears the histogram before either.
set(histogram BINDINGS 4 PUSH_BYTES 64 SPEC WG_SIZE ITEMS CHANNELS BIN_MODE SHARED_WORDS TYPES u8 u16 u32 f32
    WIDTHS_ONLY)
vkprim_add_kernel(histogram/privatized histogram/privatized.comp ${histogram})
vkprim_add_kernel(histogram/global histogram/global.comp ${histogram})
vkprim_add_kernel(histogram/zero histogram/zero.comp BINDINGS 1 PUSH_BYTES 8 SPEC WG_SIZE)

# TopK (shaders/topk, src/topk.cpp): radix select over (ordered key, index), one kernel whose phase is
# specialization constant PHASE and key transform KEY_FLAGS; keys travel as bits, so the variants are the key
# width (_k64: 64-bit keys).
# No subgroup operations, so no emulation variant. The selected keys are then ordered by RadixSort.
set(topk topk/select.comp BINDINGS 8 PUSH_BYTES 64 SPEC WG_SIZE ITEMS KEY_FLAGS PHASE)
vkprim_add_kernel(topk/select ${topk})
vkprim_add_kernel(topk/select_k64 ${topk} DEFINES VKPRIM_KEY64=1)
# TopK::record_segmented: the copy of the keys (and values) to scratch and the gather of each sorted segment's
# first k (topk/segments.comp, PHASE); SegmentedSort sorts between them.
set(topk_segments topk/segments.comp BINDINGS 8 PUSH_BYTES 64 SPEC WG_SIZE ITEMS PHASE)
vkprim_add_kernel(topk/segments ${topk_segments})
vkprim_add_kernel(topk/segments_k64 ${topk_segments} DEFINES VKPRIM_KEY64=1)
