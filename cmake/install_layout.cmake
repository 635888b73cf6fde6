# Where `cmake --install` puts things and which tools it ships. Shared by cmake/install.cmake and
# the tests of the installed tree (tests/install), which are configured before it.

# On Debian, libraries belong in the multiarch directory (lib/x86_64-linux-gnu), which the loader
# searches before the directories of ld.so.conf.d's later files: a CUDA toolkit that carries its
# own libnccl.so.2 (/usr/local/cuda-*/lib, zz-cuda-*.conf) would otherwise be found first, and a
# program built against the .deb's braid would run NVIDIA's library. GNUInstallDirs picks that
# directory only when configured for /usr, and the .deb's prefix comes later (cpack), so braid
# picks it for every prefix; -DCMAKE_INSTALL_LIBDIR=lib overrides it.
if(NOT DEFINED CACHE{CMAKE_INSTALL_LIBDIR} AND CMAKE_LIBRARY_ARCHITECTURE
   AND EXISTS /etc/debian_version AND NOT CMAKE_CROSSCOMPILING)
  set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE} CACHE PATH
      "Object code libraries (lib/<multiarch> on Debian)")
endif()
include(GNUInstallDirs)

# The tools a user of the library runs, of those this configuration builds (braid-perf only with
# BRAID_BUILD_BENCH). braid-calibrate and the micro benchmarks are for developing braid and stay
# in the build tree.
set(BRAID_INSTALLED_TOOLS)
foreach(tool braid-perf braid-schedule braid-topo braid-sim braid-doctor)
  if(TARGET ${tool})
    list(APPEND BRAID_INSTALLED_TOOLS ${tool})
  endif()
endforeach()
