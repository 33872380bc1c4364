# `cmake --install`: the aisp executable, the public headers and the CMake package with which a
# user's project builds plugins (find_package(aisp), aisp_add_benchmark).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(TARGETS aisp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# `--python` finds these beside bin/ (src/cli/python_pairs_option.cpp), hence lib/ and share/ as such.
install(TARGETS aisp_python aisp_exec aisp_serve LIBRARY DESTINATION lib/aisp)
install(FILES ${AISP_PYTHON_PACKAGE_SOURCES} DESTINATION share/aisp/python/aisp)
install(FILES ${AISP_SHIPPED_DATA} DESTINATION share/aisp/expectations)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/aisp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/cmake/package/aisp_plugin_abi.cpp DESTINATION ${CMAKE_INSTALL_DATADIR}/aisp)
set(AISP_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/aisp)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/package/aispConfig.cmake.in ${PROJECT_BINARY_DIR}/package/aispConfig.cmake
                              INSTALL_DESTINATION ${AISP_PACKAGE_DIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DATADIR)
# The plugin ABI is checked at load time (AISP_PLUGIN_ABI_VERSION); the package version only
# keeps find_package(aisp 0.1) honest.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/aispConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/aispConfig.cmake ${PROJECT_BINARY_DIR}/package/aispConfigVersion.cmake
        DESTINATION ${AISP_PACKAGE_DIR})
