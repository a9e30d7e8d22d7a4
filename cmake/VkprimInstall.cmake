include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS vkprim EXPORT vkprimTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/vkprim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT vkprimTargets NAMESPACE vkprim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vkprimConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/vkprimConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/vkprimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/vkprimConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/vkprimConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vkprim)
if(TARGET vkprim_cli)
  install(TARGETS vkprim_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
