# cmake -DVKPRIM_SOURCE_DIR=<vkprim source> -DWORK_DIR=<scratch build dir> [-DJOBS=2] -P run_package_test.cmake
#
# Proves vkprim can be consumed both ways by an outside project that compiles volk itself:
#  (a) configure/build/install the library alone (Release, no tests/tools/examples) into a temporary prefix, check the
#      installed archive references no Vulkan loader symbol and that find_package(vkprim 0.3) refuses it,
#      then build and run the consumer with find_package(vkprim 0.4) against that prefix, and check the
#      footprint: the archive's size, and what one sort plan adds to a program; then a user operator too large
#      (refused at configure) and one whose combine does not compile (the build stops with glslang's message);
#  (b) build and run the consumer with add_subdirectory(<vkprim source>) and VKPRIM_TYPES=u32.
# Any failing step stops the script with a FATAL_ERROR naming the step.
cmake_minimum_required(VERSION 3.25)

if(NOT VKPRIM_SOURCE_DIR OR NOT EXISTS "${VKPRIM_SOURCE_DIR}/CMakeLists.txt")
  message(FATAL_ERROR "pass -DVKPRIM_SOURCE_DIR=<vkprim source tree> (got '${VKPRIM_SOURCE_DIR}')")
endif()
if(NOT WORK_DIR)
  message(FATAL_ERROR "pass -DWORK_DIR=<scratch build directory>")
endif()
if(NOT JOBS)
  set(JOBS 2)
endif()
get_filename_component(VKPRIM_SOURCE_DIR "${VKPRIM_SOURCE_DIR}" ABSOLUTE)
get_filename_component(WORK_DIR "${WORK_DIR}" ABSOLUTE)
set(CONSUMER_DIR "${CMAKE_CURRENT_LIST_DIR}/consumer")

if(NOT DEFINED ENV{XDG_RUNTIME_DIR} OR "$ENV{XDG_RUNTIME_DIR}" STREQUAL "")
  set(ENV{XDG_RUNTIME_DIR} "${WORK_DIR}/xdg-runtime")
  file(MAKE_DIRECTORY "$ENV{XDG_RUNTIME_DIR}")
endif()

# Start from a clean slate so a stale cache or an old install cannot hide a broken package.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(step name)
  list(JOIN ARGN " " command_line)
  message(STATUS "[package] ${name}: ${command_line}")
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  string(TIMESTAMP t1 "%s")
  math(EXPR dt "${t1} - ${t0}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[package] step '${name}' failed (exit ${rc}) after ${dt} s:\n  ${command_line}")
  endif()
  message(STATUS "[package] ${name}: ok (${dt} s)")
endfunction()

# (a) install, then find_package.
step("configure vkprim" ${CMAKE_COMMAND} -S "${VKPRIM_SOURCE_DIR}" -B "${WORK_DIR}/vkprim-build"
     -DCMAKE_BUILD_TYPE=Release -DVKPRIM_BUILD_TESTS=OFF -DVKPRIM_BUILD_TOOLS=OFF -DVKPRIM_BUILD_EXAMPLES=OFF
     -DVKPRIM_INSTALL=ON "-DCMAKE_INSTALL_PREFIX=${prefix}")
step("build vkprim" ${CMAKE_COMMAND} --build "${WORK_DIR}/vkprim-build" -j ${JOBS})
step("install vkprim" ${CMAKE_COMMAND} --install "${WORK_DIR}/vkprim-build")

# The library must reach Vulkan only through its own tables: an undefined vk* symbol in the archive
# would bind to volk's same-named global pointer in an engine and crash at run time.
file(GLOB_RECURSE archives "${prefix}/lib*/libvkprim.a")
if(NOT archives)
  message(FATAL_ERROR "[package] install produced no libvkprim.a under ${prefix}")
endif()
list(GET archives 0 archive)
find_program(NM_PROGRAM NAMES nm)
if(NM_PROGRAM)
  execute_process(COMMAND ${NM_PROGRAM} -u -C "${archive}" OUTPUT_VARIABLE undefined RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[package] nm -u ${archive} failed (exit ${rc})")
  endif()
  string(REGEX MATCHALL "[ \t]U (vk[A-Z][A-Za-z0-9_]*)" loader_refs "${undefined}")
  if(loader_refs)
    list(REMOVE_DUPLICATES loader_refs)
    string(REPLACE ";" "\n  " loader_refs "${loader_refs}")
    message(FATAL_ERROR "[package] ${archive} references Vulkan loader symbols (it must use its own function tables):\n  ${loader_refs}")
  endif()
  message(STATUS "[package] ${archive}: no undefined vk* symbols")
endif()

# The package carries its version: a request for another minor version must not find it.
execute_process(COMMAND ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer-wrong-version"
                -DCONSUMER_MODE=find_package -DVKPRIM_REQUEST_VERSION=0.3 "-DCMAKE_PREFIX_PATH=${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE wrong_version_error)
if(rc EQUAL 0 OR NOT wrong_version_error MATCHES "version")
  message(FATAL_ERROR "[package] find_package(vkprim 0.3) found the installed package (exit ${rc}); its version "
                      "file must accept 0.4.x only:\n${wrong_version_error}")
endif()
message(STATUS "[package] find_package(vkprim 0.3): refused, as it should be")

step("configure consumer (find_package)" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer-find_package"
     -DCMAKE_BUILD_TYPE=Release -DCONSUMER_MODE=find_package "-DCMAKE_PREFIX_PATH=${prefix}")
step("build consumer (find_package)" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer-find_package" -j ${JOBS})
step("run consumer (find_package)" "${WORK_DIR}/consumer-find_package/consumer")

# Faulty user operators: a struct past 64 bytes is refused when vkprim_add_operator runs; a combine that
# does not compile stops the build with glslang's message.
execute_process(COMMAND ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer-too-big"
                -DCONSUMER_MODE=find_package -DCONSUMER_BAD_OPERATOR=too_big "-DCMAKE_PREFIX_PATH=${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE too_big_error)
if(rc EQUAL 0 OR NOT too_big_error MATCHES "takes 80 bytes in a buffer")
  message(FATAL_ERROR "[package] an 80-byte user operator was not refused at configure (exit ${rc}):\n${too_big_error}")
endif()
message(STATUS "[package] an 80-byte user operator: refused at configure, as it should be")
step("configure consumer (faulty combine)" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer-bad-combine"
     -DCONSUMER_MODE=find_package -DCONSUMER_BAD_OPERATOR=bad_combine "-DCMAKE_PREFIX_PATH=${prefix}")
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer-bad-combine" --target bad_operator
                RESULT_VARIABLE rc OUTPUT_VARIABLE bad_build ERROR_VARIABLE bad_build_error)
if(rc EQUAL 0 OR NOT "${bad_build}${bad_build_error}" MATCHES "nothing")
  message(FATAL_ERROR "[package] a combine glslang rejects did not stop the build with its message (exit ${rc}):\n"
                      "${bad_build}${bad_build_error}")
endif()
message(STATUS "[package] a combine glslang rejects: the build stops with glslang's message")

# Footprint (pay only for what is used): the installed archive of every primitive stays under 6 MB, and a program that creates
# one u32 pairs sort plan grows by at most 1.5 MB over the same program without vkprim (both stripped),
# because it links the sort's shader group and no other primitive's.
set(kLibraryLimit 6000000)
set(kOnePlanLimit 1500000)
file(SIZE "${archive}" library_bytes)
if(library_bytes GREATER kLibraryLimit)
  message(FATAL_ERROR "[package] ${archive} is ${library_bytes} bytes; the limit is ${kLibraryLimit}")
endif()
find_program(STRIP_PROGRAM NAMES strip REQUIRED)
set(probe_dir "${WORK_DIR}/consumer-find_package")
foreach(probe footprint_sort footprint_empty)
  file(COPY_FILE "${probe_dir}/${probe}" "${probe_dir}/${probe}.stripped")
  step("strip ${probe}" ${STRIP_PROGRAM} "${probe_dir}/${probe}.stripped")
  file(SIZE "${probe_dir}/${probe}.stripped" ${probe}_bytes)
endforeach()
math(EXPR one_plan_bytes "${footprint_sort_bytes} - ${footprint_empty_bytes}")
message(STATUS "[package] footprint: libvkprim.a ${library_bytes} bytes; one u32 pairs sort plan adds ${one_plan_bytes}")
if(one_plan_bytes GREATER kOnePlanLimit)
  message(FATAL_ERROR "[package] one u32 pairs sort plan adds ${one_plan_bytes} bytes to a program; the limit is "
                      "${kOnePlanLimit}")
endif()
if(NM_PROGRAM)
  execute_process(COMMAND ${NM_PROGRAM} -C "${probe_dir}/footprint_sort" OUTPUT_VARIABLE probe_symbols
                  RESULT_VARIABLE rc)
  string(REGEX MATCHALL "kShaderGroup_[a-z_]+" groups "${probe_symbols}")
  list(REMOVE_DUPLICATES groups)
  list(SORT groups)
  if(NOT rc EQUAL 0 OR NOT groups STREQUAL "kShaderGroup_indirect;kShaderGroup_sort")
    message(FATAL_ERROR "[package] footprint_sort links the shader groups '${groups}'; only sort and indirect "
                        "(GPU-driven counts) belong in a sort-only program")
  endif()
  message(STATUS "[package] footprint_sort links the shader groups: ${groups}")
endif()

# (b) add_subdirectory.
step("configure consumer (add_subdirectory)" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}"
     -B "${WORK_DIR}/consumer-add_subdirectory" -DCMAKE_BUILD_TYPE=Release -DCONSUMER_MODE=add_subdirectory
     "-DVKPRIM_SOURCE_DIR=${VKPRIM_SOURCE_DIR}")
step("build consumer (add_subdirectory)" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer-add_subdirectory" -j ${JOBS})
step("run consumer (add_subdirectory)" "${WORK_DIR}/consumer-add_subdirectory/consumer")

message(STATUS "[package] find_package and add_subdirectory: both passed")
