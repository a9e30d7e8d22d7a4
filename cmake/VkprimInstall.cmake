include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS vkprim EXPORT vkprimTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/vkprim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE)
install(FILES ${VKPRIM_GENERATED_INCLUDE_DIR}/vkprim/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vkprim)
install(EXPORT vkprimTargets NAMESPACE vkprim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim)
# vkprim_add_operator() in an engine's build: the kernel sources, the packer and the CMake function.
set(VKPRIM_INSTALL_SHADER_DIR ${CMAKE_INSTALL_DATADIR}/vkprim/shaders)
install(DIRECTORY shaders/ DESTINATION ${VKPRIM_INSTALL_SHADER_DIR} FILES_MATCHING PATTERN "*.glsl" PATTERN "*.comp")
install(FILES ${CMAKE_CURRENT_LIST_DIR}/VkprimOperators.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim)
set(VKPRIM_INSTALL_EMBED_SPIRV "")
if(TARGET vkprim_embed_spirv)
  install(TARGETS vkprim_embed_spirv RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/vkprim)
  set(VKPRIM_INSTALL_EMBED_SPIRV ${CMAKE_INSTALL_LIBEXECDIR}/vkprim/vkprim_embed_spirv${CMAKE_EXECUTABLE_SUFFIX})
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vkprimConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/vkprimConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim
  PATH_VARS VKPRIM_INSTALL_SHADER_DIR)
# The version of project(vkprim VERSION ...); before 1.0 a minor version may change the API, so a request
# for 0.4 accepts 0.4.x only.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/vkprimConfigVersion.cmake
  VERSION ${vkprim_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/vkprimConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/vkprimConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim)
if(TARGET vkprim_cli)
  install(TARGETS vkprim_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
