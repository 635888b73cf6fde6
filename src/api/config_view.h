// Reading a caller's ncclConfig_t. Programs built against NCCL 2.28's, 2.29's or 2.30's nccl.h
// pass structs of different sizes (each release appends fields), so, as NCCL does, the library
// checks the magic, then reads min(config->size, sizeof(ncclConfig_t)) bytes and takes the
// fields beyond the caller's size as not set; a larger struct from a newer header is read up
// to what braid knows.
#pragma once

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

}  // namespace braid::api
