# Build-time shader pipeline: GLSL (-D variants) -> SPIR-V (glslangValidator, depfile) -> spirv-val ->
# one packed C++ array per shader group (cmake/embed_spirv.cpp), looked up by kernel name and variant.
# Nothing is read from disk at run time.
#
# vkprim_add_kernel(<group>/<name> <source.comp relative to shaders/> BINDINGS n PUSH_BYTES n [SPEC c...]
#                   [TYPES t...] [WIDTHS_ONLY] [NO_SUBGROUP_VARIANT] [OPERATOR] [NAME_ONLY] [TARGET_ENV env]
#                   [DEFINES d...])
#   Every kernel is listed in the generated kernel_names.hpp, through which C++ names it (kernel_name() in
#   src/kernel.hpp: a name not listed fails to compile), with BINDINGS (storage buffers at set 0), PUSH_BYTES
#   and SPEC, the specialization constants it declares by their GLSL names (src/kernel_info.hpp numbers them).
#   NAME_ONLY lists it without building it: a build option leaves it out, or only user operators build it
#   (cmake/VkprimOperators.cmake).
#   Variants are "<type>" for each of TYPES that VKPRIM_TYPES keeps (all of them with WIDTHS_ONLY: kernels
#   that use the type only as a word width, whatever element type the plan has), plus "<type>.nosg" with
#   VKPRIM_NO_SUBGROUPS=1 when NO_SUBGROUP_VARIANT is given; without TYPES the variants are "default" (and
#   "nosg"). The operator is specialization constant 5, not a variant, except in OPERATOR kernels' float
#   subgroup variants: "f32.add", "f32.min", "f32.max" with VKPRIM_OP (common/types.glsl says why).
#   A kernel belongs to the group named before the slash ("sort/onesweep_k32" to "sort"). Each group is one
#   object file defining kShaderGroup_<group> and referenced only by the code that uses it (src/<group>.cpp),
#   so a program that never creates, say, a sort plan links none of the sort kernels.

set(VKPRIM_ALL_TYPES u32 i32 f32 u64 i64 f64)
set(VKPRIM_TYPES "${VKPRIM_ALL_TYPES}" CACHE STRING
    "Element types of the reduce, scan and select kernels built (a subset of: ${VKPRIM_ALL_TYPES}); a plan for another type fails with Status::unsupported")
foreach(t IN LISTS VKPRIM_TYPES)
  if(NOT t IN_LIST VKPRIM_ALL_TYPES)
    message(FATAL_ERROR "VKPRIM_TYPES: '${t}' is not one of ${VKPRIM_ALL_TYPES}")
  endif()
endforeach()

set(VKPRIM_SHADER_DIR ${CMAKE_CURRENT_LIST_DIR}/../shaders)
set(VKPRIM_SHADER_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/vkprim_shaders)
set(VKPRIM_SHADER_INCLUDE_DIR ${VKPRIM_SHADER_GEN_DIR})
set(VKPRIM_SHADER_SOURCES "")
set(VKPRIM_SHADER_GROUPS "")
set(VKPRIM_SHADER_SPVS "")
set(VKPRIM_KERNEL_NAMES "")
set(VKPRIM_KERNEL_LIST "")
set(VKPRIM_KERNEL_BUILDS "")

# The packer runs on the build machine. A cross build names a host build of it.
if(CMAKE_CROSSCOMPILING)
  set(VKPRIM_EMBED_SPIRV_EXECUTABLE "" CACHE FILEPATH
      "Host build of vkprim_embed_spirv (cmake/embed_spirv.cpp + src/spirv_pack.cpp), needed when cross-compiling")
  if(NOT VKPRIM_EMBED_SPIRV_EXECUTABLE)
    message(FATAL_ERROR "Cross-compiling vkprim needs VKPRIM_EMBED_SPIRV_EXECUTABLE: a host build of "
                        "vkprim_embed_spirv (c++ -std=c++17 -O2 -Isrc cmake/embed_spirv.cpp src/spirv_pack.cpp)")
  endif()
  set(VKPRIM_EMBED_SPIRV ${VKPRIM_EMBED_SPIRV_EXECUTABLE})
else()
  add_executable(vkprim_embed_spirv ${CMAKE_CURRENT_LIST_DIR}/embed_spirv.cpp
                 ${CMAKE_CURRENT_LIST_DIR}/../src/spirv_pack.cpp)
  target_include_directories(vkprim_embed_spirv PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../src)
  set_target_properties(vkprim_embed_spirv PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  set(VKPRIM_EMBED_SPIRV vkprim_embed_spirv)
endif()

# vkprim_add_kernel's list entry (src/kernel_info.hpp, KernelInfo) from its parsed arguments (K_*) and
# variants, and its build as VkprimOperators.cmake writes one: name|source|target env|defines.
function(_vkprim_list_kernel name group source)
  if(name IN_LIST VKPRIM_KERNEL_NAMES)
    message(FATAL_ERROR "vkprim_add_kernel: ${name} is declared twice")
  endif()
  if(NOT K_BINDINGS MATCHES "^[0-9]+$" OR NOT K_PUSH_BYTES MATCHES "^[0-9]+$")
    message(FATAL_ERROR "vkprim_add_kernel: ${name} needs BINDINGS and PUSH_BYTES")
  endif()
  set(constants "0u")
  foreach(c IN LISTS K_SPEC)
    string(TOLOWER "${c}" id)
    string(APPEND constants " | spec_bit(SpecId::${id})")
  endforeach()
  set(embedded false)
  if(variants)
    set(embedded true)
  endif()
  string(REPLACE ";" " " defines "${K_DEFINES}")
  set(VKPRIM_KERNEL_NAMES "${VKPRIM_KERNEL_NAMES};${name}" PARENT_SCOPE)
  set(entry "{\"${name}\", \"${group}\", ${K_BINDINGS}u, ${K_PUSH_BYTES}u, ${constants}, ${embedded}}")
  set(VKPRIM_KERNEL_LIST "${VKPRIM_KERNEL_LIST}    ${entry},\n" PARENT_SCOPE)
  set(VKPRIM_KERNEL_BUILDS "${VKPRIM_KERNEL_BUILDS};${name}|${source}|${K_TARGET_ENV}|${defines}" PARENT_SCOPE)
endfunction()

function(vkprim_add_kernel name source)
  cmake_parse_arguments(K "NO_SUBGROUP_VARIANT;WIDTHS_ONLY;OPERATOR;NAME_ONLY" "TARGET_ENV;BINDINGS;PUSH_BYTES"
                        "TYPES;DEFINES;SPEC" ${ARGN})
  if(K_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vkprim_add_kernel(${name}): unknown arguments ${K_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT K_TARGET_ENV)
    set(K_TARGET_ENV vulkan1.1)
  endif()
  string(FIND "${name}" "/" slash)
  if(slash LESS 1)
    message(FATAL_ERROR "vkprim_add_kernel: '${name}' is not <group>/<name>")
  endif()
  string(SUBSTRING "${name}" 0 ${slash} group)
  set(variants "")
  if(K_NAME_ONLY)
    # listed, not built
  elseif(K_TYPES)
    foreach(t IN LISTS K_TYPES)
      if(NOT K_WIDTHS_ONLY AND NOT t IN_LIST VKPRIM_TYPES)
        continue()
      endif()
      string(TOUPPER "${t}" T)
      if(K_OPERATOR AND K_NO_SUBGROUP_VARIANT AND t MATCHES "^f")
        set(op_index 0)
        foreach(op add min max)
          list(APPEND variants "${t}.${op}|-DVKPRIM_TYPE_${T}=1|-DVKPRIM_OP=${op_index}")
          math(EXPR op_index "${op_index} + 1")
        endforeach()
      else()
        list(APPEND variants "${t}|-DVKPRIM_TYPE_${T}=1")
      endif()
      if(K_NO_SUBGROUP_VARIANT)
        list(APPEND variants "${t}.nosg|-DVKPRIM_TYPE_${T}=1|-DVKPRIM_NO_SUBGROUPS=1")
      endif()
    endforeach()
  else()
    list(APPEND variants "default")
    if(K_NO_SUBGROUP_VARIANT)
      list(APPEND variants "nosg|-DVKPRIM_NO_SUBGROUPS=1")
    endif()
  endif()

  _vkprim_list_kernel(${name} ${group} ${source})
  set(VKPRIM_KERNEL_NAMES "${VKPRIM_KERNEL_NAMES}" PARENT_SCOPE)
  set(VKPRIM_KERNEL_LIST "${VKPRIM_KERNEL_LIST}" PARENT_SCOPE)
  set(VKPRIM_KERNEL_BUILDS "${VKPRIM_KERNEL_BUILDS}" PARENT_SCOPE)
  if(K_NAME_ONLY)
    return()
  endif()
  string(MAKE_C_IDENTIFIER "${name}" ident)
  set(src ${VKPRIM_SHADER_DIR}/${source})
  set(spv_dir ${VKPRIM_SHADER_GEN_DIR}/spv/${ident})
  file(MAKE_DIRECTORY ${spv_dir})
  set(spvs "")
  set(lines "")
  foreach(v IN LISTS variants)
    string(REPLACE "|" ";" parts "${v}")
    list(POP_FRONT parts vname)
    set(defines ${parts})
    foreach(d IN LISTS K_DEFINES)
      list(APPEND defines "-D${d}")
    endforeach()
    set(spv ${spv_dir}/${vname}.spv)
    add_custom_command(OUTPUT ${spv}
      COMMAND ${VKPRIM_GLSLANG} --quiet -V --target-env ${K_TARGET_ENV} ${defines} -I${VKPRIM_SHADER_DIR}
              --depfile ${spv}.d -o ${spv} ${src}
      COMMAND ${VKPRIM_SPIRV_VAL} --target-env ${K_TARGET_ENV} ${spv}
      DEPENDS ${src}
      DEPFILE ${spv}.d
      COMMENT "GLSL -> SPIR-V ${name} [${vname}]"
      VERBATIM)
    list(APPEND spvs ${spv})
    string(APPEND lines "${name} ${vname} ${spv}\n")
  endforeach()

  if(NOT group IN_LIST VKPRIM_SHADER_GROUPS)
    set(VKPRIM_SHADER_GROUPS ${VKPRIM_SHADER_GROUPS} ${group} PARENT_SCOPE)
  endif()
  set(VKPRIM_SHADER_LIST_${group} "${VKPRIM_SHADER_LIST_${group}}${lines}" PARENT_SCOPE)
  set(VKPRIM_SHADER_SPVS_${group} ${VKPRIM_SHADER_SPVS_${group}} ${spvs} PARENT_SCOPE)
  set(VKPRIM_SHADER_SPVS ${VKPRIM_SHADER_SPVS} ${spvs} PARENT_SCOPE)
endfunction()

# After every vkprim_add_kernel: one packed source per group, shader_groups.hpp declaring the groups and
# kernel_names.hpp listing every kernel.
function(vkprim_write_shader_registry)
  set(decls "")
  foreach(g IN LISTS VKPRIM_SHADER_GROUPS)
    string(MAKE_C_IDENTIFIER "${g}" gid)
    set(list_file ${VKPRIM_SHADER_GEN_DIR}/group_${gid}.txt)
    file(CONFIGURE OUTPUT ${list_file} CONTENT "${VKPRIM_SHADER_LIST_${g}}")
    set(cpp ${VKPRIM_SHADER_GEN_DIR}/group_${gid}.cpp)
    add_custom_command(OUTPUT ${cpp}
      COMMAND ${VKPRIM_EMBED_SPIRV} ${cpp} ${gid} ${list_file}
      DEPENDS ${VKPRIM_SHADER_SPVS_${g}} ${list_file} ${VKPRIM_EMBED_SPIRV}
      COMMENT "Packing the SPIR-V of shader group ${g}"
      VERBATIM)
    list(APPEND VKPRIM_SHADER_SOURCES ${cpp})
    string(APPEND decls "extern const ShaderGroup kShaderGroup_${gid};\n")
  endforeach()
  file(CONFIGURE OUTPUT ${VKPRIM_SHADER_GEN_DIR}/shader_groups.hpp CONTENT
"// Generated by cmake/VkprimShaders.cmake: the embedded shader groups (src/shader_registry.hpp).
#pragma once
#include \"shader_registry.hpp\"
namespace vkprim::detail {
@decls@}  // namespace vkprim::detail
" @ONLY)
  file(CONFIGURE OUTPUT ${VKPRIM_SHADER_GEN_DIR}/kernel_names.hpp CONTENT
"// Generated by cmake/VkprimShaders.cmake from shaders/kernels.cmake: every kernel vkprim names, built or not
// (src/kernel_info.hpp; looked up by kernel_name() in src/kernel.hpp).
#pragma once
#include \"kernel_info.hpp\"
namespace vkprim::detail {
inline constexpr KernelInfo kKernelList[] = {
@VKPRIM_KERNEL_LIST@};
}  // namespace vkprim::detail
" @ONLY)
  set(VKPRIM_SHADER_SOURCES ${VKPRIM_SHADER_SOURCES} PARENT_SCOPE)
  add_custom_target(vkprim_shaders DEPENDS ${VKPRIM_SHADER_SPVS})
endfunction()

# The kernels vkprim_add_operator builds (cmake/VkprimOperators.cmake) must be listed kernels, built from the
# same source, target environment and defines: C++ names them through the list.
function(vkprim_check_operator_kernels)
  _vkprim_operator_kernels(kernels)
  foreach(k IN LISTS kernels)
    if(NOT k IN_LIST VKPRIM_KERNEL_BUILDS)
      message(FATAL_ERROR "cmake/VkprimOperators.cmake builds \"${k}\" (name|source|target env|defines), which "
                          "no vkprim_add_kernel of shaders/kernels.cmake declares alike")
    endif()
  endforeach()
endfunction()
