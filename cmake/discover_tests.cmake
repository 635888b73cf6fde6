# braid_discover_tests: registers a GoogleTest binary's cases with ctest, one ctest test each, and
# sorts them into the labels scripts/test splits the suite by (docs/reliability.md, "What CI runs"):
#
#   faults  kills, aborts, timeouts, revocations: the cases that depend on timing, which
#           `ctest -L faults --repeat until-fail:10` must pass in every build
#   heavy   compute-bound cases whose cost is the test's own arithmetic on large buffers (the
#           schedule models, the 2^20-element matrices): scripts/test runs them in the release
#           build, where they take a third of their sanitized time, and the sanitized build
#           runs everything else
#   twins   a collectives matrix's cases of a type whose element size another type of the matrix
#           has (uint8 int8, int32 uint32 float32, ...): their memory accesses are that type's,
#           so the sanitized build checks one type of each size and the release build, which
#           checks every type's arithmetic, runs the twins
#
#   braid_discover_tests(TARGET [PREFIX p] [LABELS l...] [TIMEOUT s] [ENVIRONMENT e...]
#                        [FAULTS gtest-pattern] [HEAVY gtest-pattern] [TWINS gtest-pattern])
#
# FAULTS, HEAVY and TWINS are gtest filter patterns (A.*:B.*); a case may match one at most, or
# ctest would have it twice. A GTEST_SKIP counts as skipped in ctest,
# not as passed (GoogleTest.cmake sets SKIP_REGULAR_EXPRESSION), so that scripts/test can see
# and judge every skip.
include(GoogleTest)

# gtest_discover_tests hands its PROPERTIES through several lists, which split a LABELS value of
# two labels into a label and a stray key; so each call names its test list (TEST_LIST) and a
# script of our own, run by ctest after the discovered tests are defined, labels that list.
function(braid_label_discovered list labels)
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake")
  file(WRITE "${script}"
       "if(${list})\n  set_tests_properties(\${${list}} PROPERTIES LABELS \"${labels}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()

function(braid_discover_tests target)
  cmake_parse_arguments(arg "" "PREFIX;TIMEOUT;FAULTS;HEAVY;TWINS" "LABELS;ENVIRONMENT" ${ARGN})
  set(common DISCOVERY_TIMEOUT 60)
  if(arg_PREFIX)
    list(APPEND common TEST_PREFIX ${arg_PREFIX})
  endif()
  set(properties TIMEOUT ${arg_TIMEOUT})
  if(arg_ENVIRONMENT)
    list(APPEND properties ENVIRONMENT "${arg_ENVIRONMENT}")
  endif()
  set(taken "")  # the patterns of the labelled groups, which the rest leaves out
  foreach(kind faults heavy twins)
    string(TOUPPER ${kind} upper)
    if(arg_${upper})
      gtest_discover_tests(${target} ${common} TEST_FILTER "${arg_${upper}}"
                           TEST_LIST ${target}_${kind} PROPERTIES ${properties})
      set(labels ${arg_LABELS} ${kind})
      braid_label_discovered(${target}_${kind} "${labels}")
      list(APPEND taken "${arg_${upper}}")
    endif()
  endforeach()
  set(rest_filter "")
  if(taken)
    string(JOIN ":" rest ${taken})
    set(rest_filter TEST_FILTER "-${rest}")
  endif()
  gtest_discover_tests(${target} ${common} ${rest_filter} TEST_LIST ${target}_rest
                       PROPERTIES ${properties})
  if(arg_LABELS)
    braid_label_discovered(${target}_rest "${arg_LABELS}")
  endif()
endfunction()

# braid_group_test(TARGET NAME FILTER [NONE] [LABELS l...] [TIMEOUT s] [ENVIRONMENT e...]): one
# ctest test that runs, in one process, the cases of a GoogleTest binary that FILTER (a gtest
# filter) selects. It fails where the filter selects no case (BRAID_REQUIRE_TESTS,
# tests/support/test_main.cc), and is skipped, for scripts/test to judge, where a case skipped.
# With NONE it is the other way round: it fails where the filter selects any case.
function(braid_group_test target name filter)
  cmake_parse_arguments(arg "NONE" "TIMEOUT" "LABELS;ENVIRONMENT" ${ARGN})
  add_test(NAME ${name} COMMAND ${target} "--gtest_filter=${filter}")
  if(arg_NONE)
    set(environment BRAID_REQUIRE_NO_TESTS=1 ${arg_ENVIRONMENT})
  else()
    set(environment BRAID_REQUIRE_TESTS=1 ${arg_ENVIRONMENT})
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${arg_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" ENVIRONMENT "${environment}")
  if(arg_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}")
  endif()
endfunction()

# braid_matrix_tests(TARGET SUITE s LARGE_SUITE s [PREFIX p] [LABELS l...] [TIMEOUT s]
#                    [ENVIRONMENT e...]): a collectives matrix (tests/api/matrix_cases.h) as ctest
# tests of a collective each, not of a case each. Every case of a matrix process makes its
# communicators first (five sets of ranks as threads), and in a CI run beside another test that
# was most of a case's time: 285 processes took 325 s of the sanitized suite's 1120. Per
# collective, three tests: the cases the sanitized build runs, the `twins` (types whose element
# size another type of the matrix has: the memory accesses are that type's) and the `heavy`
# 2^20 + 3 element cases of LARGE_SUITE, which the release build runs. A fourth test, `.unlisted`,
# fails where a case of either suite is in none of these: a collective added to matrix_cases.h's
# collName and not to the list here.
function(braid_matrix_tests target)
  cmake_parse_arguments(arg "" "PREFIX;SUITE;LARGE_SUITE;TIMEOUT" "LABELS;ENVIRONMENT" ${ARGN})
  set(collectives AllReduce ReduceScatter AllGather Broadcast Bcast Reduce SendRecv Gather Scatter
      AlltoAll)  # matrix_cases.h's collName
  set(twin_types uint8 int32 uint32 int64 uint64 bfloat16 fp8e5m2)
  set(common TIMEOUT ${arg_TIMEOUT} ENVIRONMENT ${arg_ENVIRONMENT})
  set(listed "")
  foreach(coll ${collectives})
    list(APPEND listed "Threads/${arg_SUITE}.*/${coll}_*" "Threads/${arg_LARGE_SUITE}.*/${coll}_*")
  endforeach()
  string(JOIN ":" listed ${listed})
  braid_group_test(${target} "${arg_PREFIX}${arg_SUITE}.unlisted"
                   "Threads/${arg_SUITE}.*:Threads/${arg_LARGE_SUITE}.*-${listed}" NONE
                   LABELS ${arg_LABELS} TIMEOUT ${arg_TIMEOUT}
                   ENVIRONMENT ${arg_ENVIRONMENT}
                   "BRAID_REQUIRE_NO_TESTS_HINT=add their collective to braid_matrix_tests's list in cmake/discover_tests.cmake")
  foreach(coll ${collectives})
    set(cases "Threads/${arg_SUITE}.*/${coll}_")
    set(twins "")
    foreach(type ${twin_types})
      list(APPEND twins "${cases}${type}_*:${cases}${type}")
    endforeach()
    string(JOIN ":" twins ${twins})
    braid_group_test(${target} "${arg_PREFIX}${arg_SUITE}.${coll}" "${cases}*-${twins}"
                     LABELS ${arg_LABELS} ${common})
    braid_group_test(${target} "${arg_PREFIX}${arg_SUITE}.${coll}.twins" "${twins}"
                     LABELS ${arg_LABELS} twins ${common})
    braid_group_test(${target} "${arg_PREFIX}${arg_LARGE_SUITE}.${coll}"
                     "Threads/${arg_LARGE_SUITE}.*/${coll}_*" LABELS ${arg_LABELS} heavy ${common})
  endforeach()
endfunction()
