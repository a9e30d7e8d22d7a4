# include()d from tests/CMakeLists.txt when VKPRIM_SANITIZER_TESTS is on: sanitizer builds of the runtime and
# of the test support, and vkprim_add_sanitized_test() to build a test executable against one.
#   asan: AddressSanitizer (LeakSanitizer included) and UndefinedBehaviorSanitizer;
#   tsan: ThreadSanitizer.
# A kind is the runtime's C++ sources (vkprim_runtime_library) and the test support compiled with its flags
# and linked with the embedded-SPIR-V objects vkprim already has, so it adds a few dozen C++ compilations
# and never compiles the shaders or their arrays again. Those arrays stay uninstrumented (constant data),
# and so do Mesa, the Vulkan loader and the validation layers, which are loaded at run time, and Catch2's
# implementation and main() (vkprim_test_main, shared by every test executable: the session runner, none of
# vkprim's code).

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  message(FATAL_ERROR "VKPRIM_SANITIZER_TESTS needs GCC or Clang (-fsanitize); turn it off with this compiler")
endif()

set(VKPRIM_SANITIZER_DIR ${CMAKE_CURRENT_LIST_DIR})

# -fno-sanitize-recover=all: a UBSan report ends the test as a failure instead of printing a line and
# going on. Frame pointers give whole stacks in the reports at -O2.
set(VKPRIM_SANITIZE_asan -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
set(VKPRIM_SANITIZE_tsan -fsanitize=thread -fno-omit-frame-pointer)

# Every report fails the test (a non-zero exit): halt_on_error stops at the first. The suppression files
# say what they hide and why.
set(VKPRIM_SANITIZER_ENV_asan
  "ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
  "LSAN_OPTIONS=suppressions=${VKPRIM_SANITIZER_DIR}/lsan.supp:print_suppressions=0"
  "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
set(VKPRIM_SANITIZER_ENV_tsan
  "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${VKPRIM_SANITIZER_DIR}/tsan.supp")

foreach(kind asan tsan)
  vkprim_runtime_library(vkprim_${kind})
  # GCC's -Wmaybe-uninitialized gives false positives under the sanitizers' instrumentation (GCC's manual
  # says so; here in libstdc++'s <regex>, through Catch2).
  target_compile_options(vkprim_${kind} PUBLIC ${VKPRIM_SANITIZE_${kind}} $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  target_link_options(vkprim_${kind} PUBLIC ${VKPRIM_SANITIZE_${kind}})
  vkprim_test_support_library(vkprim_test_support_${kind} vkprim_${kind})
endforeach()

# vkprim_add_sanitized_test(<binary> <kind> [Catch2 test spec...]): the executable <binary>_<kind>, built from
# <binary>'s sources against the <kind> runtime, run once (every test case, or those of the spec) as the
# ctest test <binary>.<kind>, labels `sanitizer` and <kind>. Only <binary>'s sources are copied, not its own
# include directories or libraries (test_tile_state's src/, test_borrowed_device's volk): add those here first.
function(vkprim_add_sanitized_test binary kind)
  get_target_property(sources ${binary} SOURCES)
  add_executable(${binary}_${kind} ${sources})
  set_target_properties(${binary}_${kind} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON)
  target_link_libraries(${binary}_${kind} PRIVATE vkprim_test_support_${kind})
  # The test's own sources at -O0: they are instrumented all the same, and compile 3-5 times faster than at
  # -O2 with the sanitizers (test_scan.cpp with AddressSanitizer: 97 -> 20 s); the runtime they check keeps
  # the build type's optimization.
  target_compile_options(${binary}_${kind} PRIVATE -O0)
  # The validation layer and the driver stay loaded to the end, so that reports name them and the
  # suppressions apply (keep_loaded.cpp).
  target_sources(${binary}_${kind} PRIVATE ${VKPRIM_SANITIZER_DIR}/keep_loaded.cpp)
  target_link_libraries(${binary}_${kind} PRIVATE ${CMAKE_DL_LIBS})
  vkprim_warnings(${binary}_${kind})
  add_test(NAME ${binary}.${kind} COMMAND ${binary}_${kind} ${ARGN})
  set_tests_properties(${binary}.${kind} PROPERTIES
    ENVIRONMENT "${VKPRIM_SANITIZER_ENV_${kind}};XDG_RUNTIME_DIR=/tmp"
    LABELS "sanitizer;${kind}"
    TIMEOUT 900
    COST 40)
endfunction()
