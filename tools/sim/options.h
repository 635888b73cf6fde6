// braid-sim's command line.
#pragma once

#include <cstdint>
#include <string>

#include "braid/status.h"
#include "study.h"

namespace braid::sim {

struct CommandLine {
  Study study;
  bool check = true;
  bool time = true;
  bool inPlace = false;
  uint64_t seed = 0x5eedb7a1d;
  CheckShape checkShape;  ///< zero fields take defaultCheckShape's
  std::string svgPath;
  bool sweep = false;
  uint64_t sweepMin = 0;
  uint64_t sweepMax = 0;
  bool help = false;
};

/// Parses argv; an error names the bad flag or value.
Result<CommandLine> parseCommandLine(int argc, const char* const* argv);

/// The --help text.
std::string usageText();

}  // namespace braid::sim
