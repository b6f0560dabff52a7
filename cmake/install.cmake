# `cmake --install build --prefix P`: the fabsim binary in P/bin, its data in
# P/share/fabsim with the source tree's layout (files that name each other by
# relative path keep working), the README and licence in P/share/doc/fabsim.
# The binary finds P/share/fabsim from its own location (sim/core/data_root.hpp).
include(GNUInstallDirs)
# `make install` and cpack do not build first (cmake --install never does): build, then install or package.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
install(TARGETS fabsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(FABSIM_SHARE ${CMAKE_INSTALL_DATADIR}/fabsim)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/configs/ DESTINATION ${FABSIM_SHARE}/configs)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/topologies/ DESTINATION ${FABSIM_SHARE}/topologies FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/schemas/ DESTINATION ${FABSIM_SHARE}/schemas FILES_MATCHING PATTERN "*.json")
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# `cpack -G DEB` in the build folder: a Debian package whose dependencies are
# the runtime packages of the libraries fabsim links (dpkg-shlibdeps reads them
# from the binary: libsystemc, libfmt, zlib, libstdc++, ...).
set(CPACK_PACKAGE_NAME fabsim)
set(CPACK_PACKAGE_VENDOR "The fabsim authors")
set(CPACK_PACKAGE_CONTACT "The fabsim authors <maintainers@fabsim.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Interconnect fabric simulator for GPU clusters (NVLink, NVSwitch, InfiniBand, RoCE)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
include(CPack)
