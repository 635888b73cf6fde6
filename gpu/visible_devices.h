// CUDA_VISIBLE_DEVICES as the CUDA runtime reads it, for the emulated GPU, which must see what a
// process launched one GPU per process sees (torchrun, Slurm and Kubernetes set it per rank):
// its subset of the machine's devices, renumbered from 0.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace braid::gpu {

/// The devices of a machine of `uuids.size()` devices (uuids[i] is device i's, "GPU-...") that
/// a process sees under `spec` (CUDA_VISIBLE_DEVICES; nullopt: unset), in the order it numbers
/// them: a comma-separated list of device indices or UUIDs, a UUID also by a prefix that names
/// one device alone ("GPU-8932f937"). As CUDA, the list ends at the first entry that names no
/// device (or one already listed): that entry and every one after it are left out. Unset: every
/// device; set and empty: none.
std::vector<int> visibleDevices(const std::optional<std::string>& spec,
                                const std::vector<std::string>& uuids);

/// Pairs of devices, "a>b,c>d" (BRAID_EMULATE_GPU_NO_P2P: device a cannot reach device b's
/// memory; BRAID_EMULATE_GPU_BAD_P2P: its writes there arrive corrupt); nullopt where the text
/// is not such a list.
std::optional<std::vector<std::pair<int, int>>> parseDevicePairs(const std::string& text);

/// The UUID of the emulated machine's device `physical`, the same in every process.
std::string emulatedUuid(int physical);

}  // namespace braid::gpu
