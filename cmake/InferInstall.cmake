# `cmake --install` lays out headers, libinfer and a package config, so another project can
# find_package(infer) and link infer::infer.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS infer EXPORT inferTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/infer DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/infer/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/infer)
install(EXPORT inferTargets NAMESPACE infer::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/infer)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/inferConfig.cmake.in
  ${PROJECT_BINARY_DIR}/inferConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/infer)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/inferConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/inferConfig.cmake ${PROJECT_BINARY_DIR}/inferConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/infer)
