// Topology files: reading any of the three formats braid understands, and
// writing braid's own.
//
//   <braid-topology>  braid's own (braid_xml.h), one host or many;
//   <system>          NCCL's NCCL_TOPO_FILE format (nccl_xml.h), one host;
//   <topology>        hwloc's XML, as `lstopo --of xml` writes it
//                     (discover.h parseHwlocXml), one host.
// The format is told by the root element, not by the file name.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"

namespace braid::topology {

/// The graph in `text`, whatever its format. `sourceName` (a file name)
/// starts every error message, with the line where the error is.
Result<Graph> parseTopology(const std::string& text, const std::string& sourceName);

/// parseTopology of the file at `path`.
Result<Graph> loadTopologyFile(const std::string& path);

/// Writes `graph` to `path` in braid's format.
Status writeTopologyFile(const Graph& graph, const std::string& path);

/// One graph of all the hosts of `graphs`, in order, on one network: their
/// NET nodes become one, and a NIC that led to no network is joined to it
/// (at its port speed, or its PCIe bandwidth when that is unknown). Host
/// names are kept where they stay unique. This is how braid-topo models a
/// cluster from the files of its hosts.
Graph joinHosts(const std::vector<Graph>& graphs);

/// The topology a communicator uses: the file `topoFile` when it is not
/// empty (BRAID_TOPO_FILE), else discovery of this host; written in
/// braid's format to `dumpFile` when that is not empty
/// (BRAID_TOPO_DUMP_FILE).
Result<Graph> obtainTopology(const std::string& topoFile, const std::string& dumpFile);

}  // namespace braid::topology
