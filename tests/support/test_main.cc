// The main of braid's test binaries. Multi-rank tests fork real processes;
// gtest's death-test style "threadsafe" re-executes the binary so forks stay safe.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
