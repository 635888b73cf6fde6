// Reading environment variables: BRAID_X first, then NCCL_X, so that job
// scripts written for NCCL keep working. Only Config and the logger call
// these, once each; nothing else in braid reads the environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace braid::env {

/// The value of BRAID_<name>, else NCCL_<name>, else nullopt. `name` is
/// given without prefix ("DEBUG", "TIMEOUT_MS").
std::optional<std::string> get(const char* name);

/// Like get(), parsed as an integer; `fallback` when unset or unparsable
/// (an unparsable value is reported with a warning).
int64_t getInt(const char* name, int64_t fallback);

/// Parses sizes with an optional K/M/G suffix (powers of 1024): "4M" -> 4194304. Decimal,
/// 0x hex or 0 octal, as strtoll reads them; nullopt for anything else, and for a number
/// int64 cannot hold.
std::optional<int64_t> parseSize(const std::string& text);

/// A variable read as-is, no prefix logic (RANK, MASTER_ADDR, ...).
std::optional<std::string> raw(const char* fullName);

}  // namespace braid::env
