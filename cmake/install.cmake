# What `cmake --install` and `cpack -G DEB` ship: libnccl.so.2 with its dev link, the C headers,
# the user-facing tools, a pkg-config file and a CMake package (find_package(braid) gives
# braid::nccl). Included last by the top-level CMakeLists.txt, once every target exists.
#
# Only the C API is public. include/braid/*.h is the C++ API of the static braid_core; the export
# map keeps its symbols out of libnccl.so.2, so shipping those headers would promise what no
# installed library provides. Tests, braid_core, braid_kernels and GoogleTest stay in the build.
include(${CMAKE_CURRENT_LIST_DIR}/install_layout.cmake)
include(CMakePackageConfigHelpers)

# The installed tree must work wherever it is unpacked (a --prefix, /usr from the .deb), so every
# path in it is relative: the tools find libnccl.so.2 through $ORIGIN, and the package files
# compute the prefix from their own location.
file(RELATIVE_PATH BRAID_BIN_TO_LIB
     ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})

# `make install` and cpack install what is built and never build first (the Makefile generator
# would otherwise rebuild everything, the tests included, before packaging): build, then install.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS nccl EXPORT braidTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/nccl.h ${PROJECT_SOURCE_DIR}/include/braid_ext.h
        ${PROJECT_SOURCE_DIR}/include/nccl_device.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The device API's headers (docs/device-api.md), beside nccl.h as NVIDIA installs them, so that a
# kernel includes "nccl_device.h" from the same prefix as "nccl.h".
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/nccl_device
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

foreach(tool ${BRAID_INSTALLED_TOOLS})
  set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/${BRAID_BIN_TO_LIB}")
  install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# --- pkg-config: braid.pc ----------------------------------------------------------------------
# ${pcfiledir} is where pkg-config found the file; the prefix is that many levels above it.
file(RELATIVE_PATH BRAID_PC_TO_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" BRAID_PC_TO_PREFIX "${BRAID_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/braid.pc.in ${PROJECT_BINARY_DIR}/braid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/braid.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# --- CMake package: find_package(braid CONFIG) -------------------------------------------------
set(BRAID_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
install(EXPORT braidTargets NAMESPACE braid:: DESTINATION ${BRAID_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/braidConfig.cmake.in
  ${PROJECT_BINARY_DIR}/braidConfig.cmake INSTALL_DESTINATION ${BRAID_CMAKE_DIR})
# The project's version, not NCCL's: braid 0.x may still change what it ships between minors.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/braidConfig.cmake ${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
        DESTINATION ${BRAID_CMAKE_DIR})

# --- Debian package: cpack -G DEB --------------------------------------------------------------
set(CPACK_PACKAGE_NAME braid)
set(CPACK_PACKAGE_VENDOR "braid")
set(BRAID_PACKAGE_CONTACT "braid maintainers <braid@localhost>" CACHE STRING
    "Maintainer of the Debian package (name <address>)")
set(CPACK_PACKAGE_CONTACT "${BRAID_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Collective communication library, ABI compatible with NCCL 2.28 (libnccl.so.2)")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "braid provides NCCL's collectives behind a C API that is ABI compatible with NCCL 2.28, as "
  "libnccl.so.2, with its headers, pkg-config and CMake files and the braid-perf, "
  "braid-schedule, braid-topo, braid-sim and braid-doctor tools.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# NVIDIA's packages put their own libnccl.so.2 on the default search path too; with both, which
# one a program loads would depend on the loader's cache order. A prefix install can sit beside.
set(CPACK_DEBIAN_PACKAGE_CONFLICTS "libnccl2, libnccl-dev")
# Stripped, as Debian ships binaries; the build tree keeps the debug information.
set(CPACK_STRIP_FILES ON)
# A shlibs file and the ldconfig trigger, so that dpkg knows the library and the cache follows it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
find_program(BRAID_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(BRAID_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # hwloc is the only shared library libnccl.so.2 needs beyond the C and C++ runtimes.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libhwloc15, libstdc++6, libc6")
endif()
include(CPack)
