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
