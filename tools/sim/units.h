// The units braid-sim reads and prints: sizes in bytes with binary suffixes
// (as nccl-tests' -b/-e take them), bandwidths with decimal prefixes and a
// B/s or b/s unit (as vendors quote links), and durations.
//
// Inside the simulator time is in microseconds and bandwidth in bytes per
// microsecond (= MB/s), so that a slice costs bytes / bandwidth us.
#pragma once

#include <cstdint>
#include <string>

#include "braid/status.h"

namespace braid::sim {

/// "4096", "8K", "1M", "4G" (K = 1024): bytes. Rejects zero only if asked.
Result<uint64_t> parseBytes(const std::string& text);

/// "450GB/s", "400Gb/s", "25 GB/s", "100Mb/s": bytes per microsecond.
Result<double> parseBandwidth(const std::string& text);

/// "1us", "500ns", "2ms", "0.5us", "1s": microseconds.
Result<double> parseDuration(const std::string& text);

/// 1024 -> "1K", 3 << 30 -> "3G", 1000 -> "1000": the shortest exact form.
std::string formatBytes(uint64_t bytes);

/// Microseconds, with a unit that keeps 3-4 significant digits: "12.3 us", "4.56 ms".
std::string formatDuration(double us);

/// Bytes per microsecond as GB/s with two decimals.
std::string formatBandwidth(double bytesPerUs);

}  // namespace braid::sim
