# include()d from tests/CMakeLists.txt: builds an outside project that compiles volk itself and links
# vkprim both ways (installed package via find_package, and add_subdirectory), then runs it.
add_test(NAME package.find_package_and_add_subdirectory
  COMMAND ${CMAKE_COMMAND}
    -DVKPRIM_SOURCE_DIR=${vkprim_SOURCE_DIR}
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/package-test
    -DJOBS=1
    -P ${CMAKE_CURRENT_LIST_DIR}/run_package_test.cmake)
# Two full library builds, one compilation at a time on one ctest slot: the longest test, started first
# (COST) so that the lavapipe tests fill the other slot meanwhile instead of waiting for two free ones.
set_tests_properties(package.find_package_and_add_subdirectory PROPERTIES
  TIMEOUT 900
  LABELS package
  PROCESSORS 1
  COST 10000)
