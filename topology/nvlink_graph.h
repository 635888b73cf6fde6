// NVLink edges for a graph whose GPUs are already in place: GPU-GPU links
// and GPU-NVSwitch links, with a bandwidth per link from the GPU's
// generation.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/nvml_loader.h"

namespace braid::topology {

/// GB/s in each direction of one NVLink of a GPU with compute capability
/// `smVersion` (x 10): NVLink 1 (sm60) 20, NVLink 2 (sm70, sm75) 25,
/// NVLink 3 (sm80) 25, sm86's narrower NVLink 3 14.0625, NVLink 4 (sm90) 25,
/// NVLink 5 (sm100 and later) 50. An unknown version counts as NVLink 1.
double nvLinkBandwidthGBs(int smVersion);

/// Adds the links `gpus` describe to the GPUs of `graph` (matched by bus id;
/// GPUs the graph lacks are skipped). Several links to one peer make one
/// edge of their summed bandwidth. Every NVSwitch peer joins the host's one
/// kNvSwitch node, created when missing. Links to other peers (POWER NPUs)
/// are not modelled. Fills smVersion of GPUs that lack it. Returns how many
/// edges it added.
int addNvLinks(Graph& graph, const std::vector<GpuNvLinks>& gpus);

}  // namespace braid::topology
