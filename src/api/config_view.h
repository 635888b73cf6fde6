// Reading a caller's ncclConfig_t. Programs built against NCCL 2.28's to 2.32's nccl.h pass
// structs of different sizes (80 to 120 bytes: each release appends fields), so, as NCCL does,
// the library checks the magic, then reads min(config->size, sizeof(ncclConfig_t)) bytes and
// takes the fields beyond the caller's size as not set; a larger struct from a newer header is
// read up to what braid knows.
#pragma once

#include <string>

#include "braid/comm.h"
#include "braid/status.h"
#include "nccl.h"

namespace braid::api {

/// Most blocks (channels) a communicator runs (Config::validate's bound on BRAID_NCHANNELS).
inline constexpr int kMaxCtas = 64;

/// Refuses a config not made with NCCL_CONFIG_INITIALIZER, one too small to hold `blocking`,
/// and fields out of range; NULL is fine (the defaults).
Status checkConfig(const ncclConfig_t* config);

/// The caller's config as a whole struct of braid's size: the bytes the caller's `size` covers,
/// NCCL_CONFIG_INITIALIZER's values for the rest (a fresh initializer for NULL). Check first.
ncclConfig_t readConfig(const ncclConfig_t* config);

/// minCTAs or maxCTAs of a read config: 0 where unset.
int ctaBound(int field);

/// What braid applies of a communicator's ncclConfig_t, kept apart from the caller's struct
/// (whose strings need not outlive the call). A communicator keeps the settings it was made with
/// (ncclComm::settings): its split, grow or shrink given no config makes the child with them, as
/// NCCL copies the parent's config.
struct CommSettings {
  /// config.blocking. A non-blocking creation runs on a thread of its own
  /// (ncclCommInitRankConfig); a split, grow or shrink completes before it returns, which
  /// NCCL's non-blocking contract allows, and its child keeps the setting for its own children.
  bool blocking = true;
  int minChannels = 0;  ///< config.minCTAs; 0: unset
  int maxChannels = 0;  ///< config.maxCTAs; 0: unset
  std::string name;     ///< config.commName, copied; empty: none

  /// The settings of a checked config; NULL: the defaults.
  static CommSettings of(const ncclConfig_t* config);
  /// A child's: those of its config, or `parent`'s where it passed none.
  static CommSettings forChild(const ncclConfig_t* config, const CommSettings& parent) {
    return config != nullptr ? of(config) : parent;
  }
  /// The creation options they set: channel bounds and name.
  void applyTo(CommOptions& options) const {
    options.minChannels = minChannels;
    options.maxChannels = maxChannels;
    options.name = name;
  }
};

}  // namespace braid::api
