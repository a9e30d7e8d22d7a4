# User operators (include/vkprim/operator.hpp): an engine's struct and combine function compiled into
# vkprim's reduce and scan kernels at the engine's build time, with the same glslang and spirv-val checks
# as vkprim's own kernels, packed like them (cmake/embed_spirv.cpp) and embedded in the engine's target.
#
# vkprim_add_operator(TARGET <target> NAME <name> TYPE_GLSL "struct S { ... }" IDENTITY <GLSL expression>
#                     COMBINE <file.glsl> [FUNCTION <name, default combine>])
#   COMBINE holds GLSL that defines `S FUNCTION(S a, S b)` (and any helpers it calls). The members of S are
#   32-bit scalars or vectors, or fixed arrays of them; S is at most 64 bytes in a buffer (std430). Adds to
#   <target> the kernels and <vkprim_ops/<name>.hpp> (include path added): vkprim_ops::<name>() and the
#   layout of S as a C++ struct vkprim_ops::S. A struct that breaks these rules stops the configure step; a
#   combine that does not compile stops the build with glslang's message.
#
# Included with VKPRIM_OPERATOR_SHADER_DIR (vkprim's shaders/) and VKPRIM_EMBED_SPIRV (the packer: a target
# or a path) set, by vkprim's CMakeLists.txt or its package config.

# Where the function finds vkprim's shader sources and packer, kept in the cache so that it works from any
# directory: the engine's, when vkprim is a subdirectory of it.
set(VKPRIM_OPERATOR_SHADER_DIR_INTERNAL "${VKPRIM_OPERATOR_SHADER_DIR}" CACHE INTERNAL "vkprim_add_operator: shaders/")
set(VKPRIM_OPERATOR_EMBED_SPIRV_INTERNAL "${VKPRIM_EMBED_SPIRV}" CACHE INTERNAL "vkprim_add_operator: the packer")

# Member type -> "<components> <base>" where base is float, int or uint.
function(_vkprim_member_type type out_n out_base)
  if(type MATCHES "^(float|int|uint)$")
    set(n 1)
    set(base ${type})
  elseif(type MATCHES "^([iu]?)vec([234])$")
    set(n ${CMAKE_MATCH_2})
    if(CMAKE_MATCH_1 STREQUAL "i")
      set(base int)
    elseif(CMAKE_MATCH_1 STREQUAL "u")
      set(base uint)
    else()
      set(base float)
    endif()
  else()
    set(n 0)
    set(base "")
  endif()
  set(${out_n} ${n} PARENT_SCOPE)
  set(${out_base} ${base} PARENT_SCOPE)
endfunction()

function(_vkprim_round_up value align out)
  math(EXPR r "(${value} + ${align} - 1) / ${align} * ${align}")
  set(${out} ${r} PARENT_SCOPE)
endfunction()

# The kernels a user operator's plans use (src/reduce.cpp, src/segmented_reduce.cpp, src/scan.cpp, src/by_key.cpp):
# name|source|target env|defines (space-separated). Each is built with subgroups and as the emulation
# (".nosg"). vkprim's own configure checks them against shaders/kernels.cmake (vkprim_check_operator_kernels).
function(_vkprim_operator_kernels out)
  set(${out}
    "reduce/ordered|reduce/ordered.comp|vulkan1.1|"
    "segmented_reduce/segments|segmented_reduce/segments.comp|vulkan1.1|"
    "segmented_reduce/ranges|segmented_reduce/ranges.comp|vulkan1.1|"
    "scan/reduce_then_scan_reduce|scan/reduce_then_scan_reduce.comp|vulkan1.1|"
    "scan/reduce_then_scan_scan|scan/reduce_then_scan_scan.comp|vulkan1.1|"
    "scan/subgroup_block|scan/subgroup_block.comp|vulkan1.1|"
    "scan/add_carry|scan/add_carry.comp|vulkan1.1|"
    "scan/chained_lookback|scan/chained.comp|vulkan1.2|"
    "scan/chained_fallback|scan/chained.comp|vulkan1.2|VKPRIM_FALLBACK=1"
    "scan/chained_lookback64|scan/chained.comp|vulkan1.2|VKPRIM_STATE64=1"
    "scan/chained_fallback64|scan/chained.comp|vulkan1.2|VKPRIM_STATE64=1 VKPRIM_FALLBACK=1"
    "by_key/chained_k32|by_key/chained.comp|vulkan1.2|"
    "by_key/chained_k64|by_key/chained.comp|vulkan1.2|VKPRIM_KEY64=1"
    "by_key/portable_k32|by_key/chained.comp|vulkan1.1|VKPRIM_BY_KEY_PORTABLE=1"
    "by_key/portable_k64|by_key/chained.comp|vulkan1.1|VKPRIM_KEY64=1 VKPRIM_BY_KEY_PORTABLE=1"
    PARENT_SCOPE)
endfunction()

function(vkprim_add_operator)
  cmake_parse_arguments(PARSE_ARGV 0 OP "" "TARGET;NAME;TYPE_GLSL;IDENTITY;COMBINE;FUNCTION" "")
  _vkprim_operator_kernels(kernels)
  set(max_bytes 64)  # UserOperator::size (src/plan_common.hpp check_user_operator)
  set(shader_dir "${VKPRIM_OPERATOR_SHADER_DIR_INTERNAL}")
  set(embed "${VKPRIM_OPERATOR_EMBED_SPIRV_INTERNAL}")
  set(where "vkprim_add_operator(NAME ${OP_NAME})")
  foreach(required TARGET NAME TYPE_GLSL IDENTITY COMBINE)
    if(NOT DEFINED OP_${required} OR "${OP_${required}}" STREQUAL "")
      message(FATAL_ERROR "${where}: ${required} is required")
    endif()
  endforeach()
  if(OP_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${OP_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${OP_TARGET})
    message(FATAL_ERROR "${where}: TARGET ${OP_TARGET} is not a target")
  endif()
  get_target_property(target_type ${OP_TARGET} TYPE)
  if(target_type STREQUAL "INTERFACE_LIBRARY")
    message(FATAL_ERROR "${where}: TARGET ${OP_TARGET} is an INTERFACE library, which compiles no sources; give "
                        "the static or shared library or the executable that uses the operator")
  endif()
  if(NOT OP_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME must be a C identifier")
  endif()
  if(NOT OP_FUNCTION)
    set(OP_FUNCTION combine)
  endif()
  find_program(VKPRIM_GLSLANG glslangValidator)
  find_program(VKPRIM_SPIRV_VAL spirv-val)
  if(NOT VKPRIM_GLSLANG OR NOT VKPRIM_SPIRV_VAL)
    message(FATAL_ERROR "${where}: needs glslangValidator and spirv-val (Debian: glslang-tools, spirv-tools)")
  endif()
  if(NOT embed)
    message(FATAL_ERROR "${where}: this vkprim package has no SPIR-V packer (vkprim_embed_spirv); a cross-compiled "
                        "package needs VKPRIM_EMBED_SPIRV set to a host build of it")
  endif()
  get_filename_component(combine_file "${OP_COMBINE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${combine_file}")
    message(FATAL_ERROR "${where}: COMBINE file ${combine_file} does not exist")
  endif()

  # One NAME, one operator. The signature (struct, identity, function and combine source) names the generated
  # symbols: a second declaration of NAME with another signature stops the configure step here, and across
  # static libraries configured apart it fails the link (each definition also defines the plain symbol
  # vkprim_ops::<NAME>_declared_twice_with_different_definitions, and each user's calls reference their own
  # signature, so both definitions are linked in). The same declaration twice is harmless.
  file(READ "${combine_file}" combine_source)
  string(SHA1 signature "${OP_TYPE_GLSL}|${OP_IDENTITY}|${OP_FUNCTION}|${combine_source}")
  string(SUBSTRING "${signature}" 0 12 signature)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${combine_file}")
  get_property(first GLOBAL PROPERTY VKPRIM_OPERATOR_${OP_NAME})
  if(first AND NOT first MATCHES "^${signature} ")
    string(REGEX REPLACE "^[0-9a-f]+ " "" first_where "${first}")
    message(FATAL_ERROR "${where}: NAME ${OP_NAME} is already declared (${first_where}) with another TYPE_GLSL, "
                        "IDENTITY, FUNCTION or COMBINE; a second operator needs a NAME of its own")
  endif()
  set_property(GLOBAL PROPERTY VKPRIM_OPERATOR_${OP_NAME} "${signature} TARGET ${OP_TARGET} in ${CMAKE_CURRENT_SOURCE_DIR}")
  set(symbol ${OP_NAME}_${signature})

  # The struct: name and members (the semicolons of its body arrive as list separators).
  string(REPLACE ";" "\n" decl "${OP_TYPE_GLSL}")
  if(NOT decl MATCHES "^[ \t\r\n]*struct[ \t\r\n]+([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*{([^}]*)}[ \t\r\n]*$")
    message(FATAL_ERROR "${where}: TYPE_GLSL must be one struct declaration, \"struct Name { members }\"; got: ${decl}")
  endif()
  set(struct ${CMAKE_MATCH_1})
  string(REPLACE "\n" ";" members "${CMAKE_MATCH_2}")

  set(offset 0)
  set(struct_align 4)
  set(word 0)
  set(pad 0)
  set(to_words "")
  set(from_words "")
  set(cpp_members "")
  set(glsl_members "")
  foreach(m IN LISTS members)
    string(STRIP "${m}" m)
    if(m STREQUAL "")
      continue()
    endif()
    if(NOT m MATCHES "^([a-z0-9]+)[ \t\r\n]+([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*(\\[[ \t]*([0-9]+)[ \t]*\\])?$")
      message(FATAL_ERROR "${where}: member \"${m}\" of ${struct} is not \"type name\" or \"type name[N]\"")
    endif()
    set(type ${CMAKE_MATCH_1})
    set(member ${CMAKE_MATCH_2})
    set(count "${CMAKE_MATCH_4}")
    if(count STREQUAL "")
      string(APPEND glsl_members " ${type} ${member};")
    else()
      string(APPEND glsl_members " ${type} ${member}[${count}];")
    endif()
    _vkprim_member_type(${type} n base)
    if(n EQUAL 0)
      message(FATAL_ERROR "${where}: member ${member} of ${struct} has type ${type}; user operators take 32-bit "
                          "scalars and vectors (float, int, uint, vec2..4, ivec2..4, uvec2..4) and arrays of them")
    endif()
    # std430: a vec3 aligns like a vec4; an array's stride is its element's size rounded to its alignment.
    if(n EQUAL 1)
      set(align 4)
    elseif(n EQUAL 2)
      set(align 8)
    else()
      set(align 16)
    endif()
    math(EXPR size "${n} * 4")
    set(elements 1)
    set(slots "")
    if(NOT count STREQUAL "")
      if(count LESS 1)
        message(FATAL_ERROR "${where}: member ${member} of ${struct} is an array of ${count}")
      endif()
      set(elements ${count})
      _vkprim_round_up(${size} ${align} size)
      math(EXPR last "${count} - 1")
      foreach(i RANGE ${last})
        list(APPEND slots "[${i}]")
      endforeach()
    else()
      set(slots "-")
    endif()
    _vkprim_round_up(${offset} ${align} aligned)
    if(aligned GREATER offset)
      math(EXPR pad_words "(${aligned} - ${offset}) / 4")
      string(APPEND cpp_members "  uint32_t pad${pad}_[${pad_words}];\n")
      math(EXPR pad "${pad} + 1")
    endif()
    math(EXPR offset "${aligned} + ${size} * ${elements}")
    if(align GREATER struct_align)
      set(struct_align ${align})
    endif()
    # C++ layout: the element's components, and for arrays of vec3 a padding word per element.
    if(base STREQUAL "float")
      set(ctype float)
      set(to_bits floatBitsToUint)
      set(from_bits uintBitsToFloat)
    elseif(base STREQUAL "int")
      set(ctype int32_t)
      set(to_bits uint)
      set(from_bits int)
    else()
      set(ctype uint32_t)
      set(to_bits "")
      set(from_bits "")
    endif()
    set(cpp_dims "")
    if(NOT count STREQUAL "")
      string(APPEND cpp_dims "[${count}]")
    endif()
    if(n GREATER 1)
      math(EXPR stride_words "${size} / 4")
      if(NOT count STREQUAL "")
        string(APPEND cpp_dims "[${stride_words}]")
      else()
        string(APPEND cpp_dims "[${n}]")
      endif()
    endif()
    string(APPEND cpp_members "  ${ctype} ${member}${cpp_dims};\n")
    # GLSL: every component of every element, one u32 word each.
    foreach(slot IN LISTS slots)
      if(slot STREQUAL "-")
        set(slot "")
      endif()
      if(n EQUAL 1)
        set(comps "-")
      else()
        set(comps x y z w)
        list(SUBLIST comps 0 ${n} comps)
      endif()
      foreach(c IN LISTS comps)
        set(ref "v.${member}${slot}")
        if(NOT c STREQUAL "-")
          string(APPEND ref ".${c}")
        endif()
        string(APPEND to_words "  w[${word}] = ${to_bits}(${ref});\n")
        string(APPEND from_words "  ${ref} = ${from_bits}(w[${word}]);\n")
        math(EXPR word "${word} + 1")
      endforeach()
    endforeach()
  endforeach()
  if(word EQUAL 0)
    message(FATAL_ERROR "${where}: ${struct} has no members")
  endif()
  set(decl "struct ${struct} {${glsl_members} }")
  _vkprim_round_up(${offset} ${struct_align} struct_size)
  if(struct_size GREATER offset)
    math(EXPR pad_words "(${struct_size} - ${offset}) / 4")
    string(APPEND cpp_members "  uint32_t pad${pad}_[${pad_words}];\n")
  endif()
  if(struct_size GREATER max_bytes)
    message(FATAL_ERROR "${where}: ${struct} takes ${struct_size} bytes in a buffer (std430); user operators take "
                        "at most ${max_bytes}")
  endif()

  set(gen ${CMAKE_CURRENT_BINARY_DIR}/vkprim_ops/${OP_NAME})
  set(include_dir ${CMAKE_CURRENT_BINARY_DIR}/vkprim_ops/include)
  get_filename_component(combine_dir "${combine_file}" DIRECTORY)
  get_filename_component(combine_name "${combine_file}" NAME)
  file(CONFIGURE OUTPUT ${gen}/vkprim_user_operator.glsl CONTENT
"// Generated by vkprim_add_operator(NAME ${OP_NAME}) (cmake/VkprimOperators.cmake): do not edit.
${decl};
#define VALUE_T ${struct}
#define VKPRIM_USER_WORDS ${word}u
#define VKPRIM_USER_WORD_COUNT ${word}
uint[VKPRIM_USER_WORDS] vk_user_to_words(${struct} v) {
  uint[VKPRIM_USER_WORDS] w;
${to_words}  return w;
}
${struct} vk_user_from_words(uint[VKPRIM_USER_WORDS] w) {
  ${struct} v;
${from_words}  return v;
}
#include \"${combine_name}\"
${struct} vk_user_identity() { return ${OP_IDENTITY}; }
${struct} vk_user_combine(${struct} a, ${struct} b) { return ${OP_FUNCTION}(a, b); }
" @ONLY)

  # Every kernel and variant: GLSL -> SPIR-V -> spirv-val, then one packed group.
  set(spvs "")
  set(lines "")
  foreach(k IN LISTS kernels)
    string(REPLACE "|" ";" parts "${k}")
    list(GET parts 0 kernel)
    list(GET parts 1 source)
    list(GET parts 2 env)
    list(GET parts 3 define)
    string(REPLACE " " ";" define "${define}")
    string(MAKE_C_IDENTIFIER "${kernel}" kid)
    foreach(variant "${OP_NAME}" "${OP_NAME}.nosg")
      set(defines -DVKPRIM_TYPE_USER=1)
      foreach(d IN LISTS define)
        list(APPEND defines -D${d})
      endforeach()
      if(variant MATCHES "\\.nosg$")
        list(APPEND defines -DVKPRIM_NO_SUBGROUPS=1)
      endif()
      set(spv ${gen}/${kid}.${variant}.spv)
      add_custom_command(OUTPUT ${spv}
        COMMAND ${VKPRIM_GLSLANG} --quiet -V --target-env ${env} ${defines} -I${shader_dir}
                -I${gen} -I${combine_dir} --depfile ${spv}.d -o ${spv} ${shader_dir}/${source}
        COMMAND ${VKPRIM_SPIRV_VAL} --target-env ${env} ${spv}
        DEPENDS ${shader_dir}/${source} ${gen}/vkprim_user_operator.glsl ${combine_file}
        DEPFILE ${spv}.d
        COMMENT "GLSL -> SPIR-V ${kernel} [user operator ${OP_NAME}]"
        VERBATIM)
      list(APPEND spvs ${spv})
      string(APPEND lines "${kernel} ${variant} ${spv}\n")
    endforeach()
  endforeach()
  file(CONFIGURE OUTPUT ${gen}/kernels.txt CONTENT "${lines}")
  set(group_cpp ${gen}/kernels.cpp)
  add_custom_command(OUTPUT ${group_cpp}
    COMMAND ${embed} ${group_cpp} user_${symbol} ${gen}/kernels.txt
    DEPENDS ${spvs} ${gen}/kernels.txt ${embed}
    COMMENT "Packing the SPIR-V of user operator ${OP_NAME}"
    VERBATIM)

  file(CONFIGURE OUTPUT ${include_dir}/vkprim_ops/${OP_NAME}.hpp CONTENT
"// Generated by vkprim_add_operator(NAME ${OP_NAME}) (cmake/VkprimOperators.cmake): do not edit.
#pragma once

#include <cstdint>

#include \"vkprim/operator.hpp\"

namespace vkprim_ops {

// ${decl} as laid out in buffers (std430): ${struct_size} bytes per element.
struct ${struct} {
${cpp_members}};
static_assert(sizeof(${struct}) == ${struct_size}, \"${struct}: layout differs from std430\");

// The operator for the user_operator of ReduceDesc, SegmentedReduceDesc, ScanDesc, ReduceByKeyDesc and ScanByKeyDesc.
const vkprim::UserOperator& ${symbol}();  // this declaration's own (the suffix: its signature)
inline const vkprim::UserOperator& ${OP_NAME}() { return ${symbol}(); }

}  // namespace vkprim_ops
" @ONLY)
  file(CONFIGURE OUTPUT ${gen}/operator.cpp CONTENT
"// Generated by vkprim_add_operator(NAME ${OP_NAME}) (cmake/VkprimOperators.cmake): do not edit.
#include \"vkprim_ops/${OP_NAME}.hpp\"

#include \"vkprim/detail/shader_group.hpp\"

namespace vkprim::detail {
extern const ShaderGroup kShaderGroup_user_${symbol};
}

// Defined by every definition of ${OP_NAME}: two definitions with different signatures in one program
// (static libraries that each declared it) fail the link here.
namespace vkprim_ops {
extern const char ${OP_NAME}_declared_twice_with_different_definitions;
const char ${OP_NAME}_declared_twice_with_different_definitions = 0;
}  // namespace vkprim_ops

const vkprim::UserOperator& vkprim_ops::${symbol}() {
  static const vkprim::UserOperator op{\"${OP_NAME}\", ${struct_size}u, ${word}u, &vkprim::detail::kShaderGroup_user_${symbol}};
  return op;
}
" @ONLY)
  target_sources(${OP_TARGET} PRIVATE ${group_cpp} ${gen}/operator.cpp)
  target_include_directories(${OP_TARGET} PUBLIC $<BUILD_INTERFACE:${include_dir}>)
endfunction()
