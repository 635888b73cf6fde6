# -DBRAID_FUZZ=ON: the libFuzzer targets of tests/fuzz (scripts/fuzz builds them in build-fuzz/).
# clang only: libFuzzer is part of clang (Debian's clang and libclang-rt-14-dev).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "braid: BRAID_FUZZ=ON needs clang (CXX=clang++ CC=clang), not "
                      "${CMAKE_CXX_COMPILER_ID}")
endif()
# -O1 with assertions on: quicker to build on two cores, and an assertion that hostile input
# reaches is a bug like any other.
set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O1 -g")
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g")

# What braid_core and the targets are built with: AddressSanitizer, UBSan (every finding stops
# the run, as a crash does, so libFuzzer keeps the input) and the coverage libFuzzer steers by.
set(BRAID_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all)
set(BRAID_FUZZ_COMPILE_OPTIONS ${BRAID_FUZZ_SANITIZERS} -fsanitize=fuzzer-no-link
    -fno-omit-frame-pointer)

# braid_fuzz_instrument(target): builds `target` with the options above.
function(braid_fuzz_instrument target)
  target_compile_options(${target} PRIVATE
                         "$<$<COMPILE_LANGUAGE:C,CXX>:${BRAID_FUZZ_COMPILE_OPTIONS}>")
endfunction()

# braid_add_fuzz_core(): braid_fuzz_core, the parts of braid_core the targets reach (Config and
# the parsers of the environment, topology files and what they use), from their folders and with
# braid_core's usage requirements but not its kernels. Called from src/CMakeLists.txt, after
# braid_core. Building only these takes a quarter of the time braid_core would on two cores. A
# target that reaches further adds the folder or file here: an undefined reference when its link
# fails says which.
function(braid_add_fuzz_core)
  file(GLOB sources CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/topology/*.cc
    ${PROJECT_SOURCE_DIR}/base/*.cc
    ${PROJECT_SOURCE_DIR}/src/tune/*.cc)
  list(APPEND sources
    ${PROJECT_SOURCE_DIR}/src/bootstrap/root.cc
    ${PROJECT_SOURCE_DIR}/src/bootstrap/unique_id.cc
    ${PROJECT_SOURCE_DIR}/src/bootstrap/shrink_letter.cc
    ${PROJECT_SOURCE_DIR}/src/watch/watch_wire.cc
    ${PROJECT_SOURCE_DIR}/src/config.cc
    ${PROJECT_SOURCE_DIR}/src/algo/algorithm.cc
    ${PROJECT_SOURCE_DIR}/transport/net/ib/hca_filter.cc
    ${PROJECT_SOURCE_DIR}/emulation/ib/emulated_device_kinds.cc
    ${PROJECT_SOURCE_DIR}/emulation/ib/emulated_gid_table.cc)
  add_library(braid_fuzz_core STATIC ${sources})
  braid_fuzz_instrument(braid_fuzz_core)
  get_target_property(includes braid_core INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(links braid_core INTERFACE_LINK_LIBRARIES)
  list(REMOVE_ITEM links braid_kernels)
  target_include_directories(braid_fuzz_core PUBLIC ${includes})
  target_link_libraries(braid_fuzz_core PUBLIC ${links})
endfunction()

# braid_add_fuzzer(name sources...): the libFuzzer target <name>_fuzz, linked with braid_fuzz_core.
# scripts/fuzz runs every target it finds in bin/ with the seeds of tests/fuzz/corpus/<name>/
# and, when there is one, the dictionary tests/fuzz/<name>.dict. `cmake --build --target
# braid_fuzzers` builds them all.
add_custom_target(braid_fuzzers)
function(braid_add_fuzzer name)
  add_executable(${name}_fuzz ${ARGN})
  braid_fuzz_instrument(${name}_fuzz)
  target_include_directories(${name}_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name}_fuzz PRIVATE braid_fuzz_core)
  target_link_options(${name}_fuzz PRIVATE ${BRAID_FUZZ_SANITIZERS} -fsanitize=fuzzer)
  add_dependencies(braid_fuzzers ${name}_fuzz)
endfunction()
