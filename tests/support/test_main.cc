// The main of braid's test binaries. Multi-rank tests fork real processes;
// gtest's death-test style "threadsafe" re-executes the binary so forks stay safe.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace {

// Whether the environment variable `name` is set to a non-zero number.
bool envFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::atoi(value) != 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int status = RUN_ALL_TESTS();
  // A ctest test that runs a group of cases by a filter (cmake/discover_tests.cmake's
  // braid_group_test) would pass while checking nothing if its filter selected no case.
  const int selected = ::testing::UnitTest::GetInstance()->test_to_run_count();
  if (envFlag("BRAID_REQUIRE_TESTS") && !GTEST_FLAG_GET(list_tests) && selected == 0) {
    std::fprintf(stderr, "BRAID_REQUIRE_TESTS: the filter selected no test\n");
    return 1;
  }
  // And the group of a matrix's cases that no listed group selects (braid_matrix_tests) must
  // select none, or cases would run in no ctest test once the list fell behind the matrix.
  if (envFlag("BRAID_REQUIRE_NO_TESTS") && !GTEST_FLAG_GET(list_tests) && selected != 0) {
    const char* hint = std::getenv("BRAID_REQUIRE_NO_TESTS_HINT");
    std::fprintf(stderr,
                 "BRAID_REQUIRE_NO_TESTS: the filter selected %d tests, which no other group "
                 "runs: %s\n",
                 selected, hint != nullptr ? hint : "give them a group");
    return 1;
  }
  return status;
}
