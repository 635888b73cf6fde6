// braid-topo: shows the topology braid sees and what it decides from it.
//
//   braid-topo [--load FILE]... [--dump FILE] [--nranks N] [--p2p-level LEVEL]
//              [--transports LIST] [--max-channels N] [--channel-gbs GBS]
//   braid-topo --line-latency A,B
//
// Without --load it discovers this host (or reads BRAID_TOPO_FILE, as a
// communicator would). It prints the machine as a tree, the path type
// matrices, where N ranks run, the transport of every pair, the rings and
// the trees. Several --load files become one cluster, one host per file,
// joined by a network; --dump writes what was loaded or discovered in
// braid's format. --line-latency measures instead how long a cache line takes from CPU A to
// CPU B (base/line_latency.h), which says what state a VM is in: scripts/test prints it with the
// minutes of its phases, as a run's times mean little without it.
//
// Exit status: 0 done, 1 the topology could not be read or planned, 2 bad
// command line.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/line_latency.h"
#include "topology/discover.h"
#include "topology/paths.h"
#include "topology/plan.h"
#include "topology/summary.h"
#include "topology/topology_file.h"

namespace {

namespace topo = braid::topology;

void usage(FILE* to) {
  fprintf(to,
          "usage: braid-topo [--load FILE]... [--dump FILE] [--nranks N]\n"
          "                  [--p2p-level LEVEL] [--transports LIST]\n"
          "                  [--max-channels N] [--channel-gbs GBS] [--cross-nic 0|1|2]\n"
          "  --load FILE        read a topology file (braid, NCCL or hwloc XML) instead of\n"
          "                     discovering this host; several files make a cluster\n"
          "  --dump FILE        write the topology in braid's format\n"
          "  --nranks N         ranks to plan for (default: one per GPU, else one per CPU,\n"
          "                     at least 2); rank i drives GPU i, host by host\n"
          "  --p2p-level LEVEL  farthest path for cuda_ipc: LOC NVL NVB PIX PXB PHB SYS\n"
          "                     (default BRAID_P2P_LEVEL, NCCL_P2P_LEVEL, else by CPU)\n"
          "  --transports LIST  allowed transports, cuda_ipc,shm,net (default\n"
          "                     BRAID_TRANSPORTS, else all)\n"
          "  --max-channels N   most ring channels (default 32)\n"
          "  --channel-gbs GBS  most one channel moves, GB/s (default: no limit)\n"
          "  --cross-nic 0|1|2  1: a ring may leave a host by one NIC and enter the next\n"
          "                     by another; 0, 2: each channel on one rail (default\n"
          "                     BRAID_CROSS_NIC, NCCL_CROSS_NIC, else 2)\n"
          "  --line-latency A,B measure how long a cache line takes from CPU A to CPU B\n"
          "                     (one way, ns), print it and exit\n");
}

struct Options {
  std::vector<std::string> loads;
  std::string dump;
  long nranks = 0;
  std::string p2pLevel;
  std::string transports;
  long maxChannels = 32;
  double channelGBs = 0;
  long crossNic = -1;  ///< -1: BRAID_CROSS_NIC, else 2
  long lineFrom = -1;  ///< --line-latency's CPUs; -1: not asked
  long lineTo = -1;
};

bool parseLong(const char* text, long min, long max, long* out) {
  char* end = nullptr;
  *out = strtol(text, &end, 10);
  return end != text && *end == '\0' && *out >= min && *out <= max;
}

// Returns 0 when the command line is good, else the exit status.
int parseOptions(int argc, char** argv, Options* options) {
  if (auto level = braid::env::get("P2P_LEVEL")) options->p2pLevel = *level;
  if (auto list = braid::env::get("TRANSPORTS")) options->transports = *list;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(stdout);
      exit(0);
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "braid-topo: %s needs a value\n", flag.c_str());
      return 2;
    }
    const char* value = argv[++i];
    bool good = true;
    if (flag == "--load") {
      options->loads.push_back(value);
    } else if (flag == "--dump") {
      options->dump = value;
    } else if (flag == "--nranks") {
      good = parseLong(value, 1, 1 << 20, &options->nranks);
    } else if (flag == "--p2p-level") {
      options->p2pLevel = value;
    } else if (flag == "--transports") {
      options->transports = value;
    } else if (flag == "--max-channels") {
      good = parseLong(value, 1, 1024, &options->maxChannels);
    } else if (flag == "--cross-nic") {
      good = parseLong(value, 0, 2, &options->crossNic);
    } else if (flag == "--line-latency") {
      const std::string pair = value;
      const size_t comma = pair.find(',');
      good = comma != std::string::npos &&
             parseLong(pair.substr(0, comma).c_str(), 0, 1 << 16, &options->lineFrom) &&
             parseLong(pair.substr(comma + 1).c_str(), 0, 1 << 16, &options->lineTo);
    } else if (flag == "--channel-gbs") {
      char* end = nullptr;
      options->channelGBs = strtod(value, &end);
      good = end != value && *end == '\0' && options->channelGBs >= 0;
    } else {
      fprintf(stderr, "braid-topo: unknown option %s\n", flag.c_str());
      usage(stderr);
      return 2;
    }
    if (!good) {
      fprintf(stderr, "braid-topo: bad value '%s' for %s\n", value, flag.c_str());
      return 2;
    }
  }
  return 0;
}

int fail(const braid::Status& status) {
  fprintf(stderr, "braid-topo: %s\n", status.message().c_str());
  return 1;
}

// The graph: the files given, BRAID_TOPO_FILE, or this host.
braid::Result<topo::Graph> obtainGraph(const Options& options, std::string* source) {
  std::vector<std::string> files = options.loads;
  if (files.empty()) {
    if (auto file = braid::env::get("TOPO_FILE")) {
      files.push_back(*file);
      *source = "read from " + *file + " (BRAID_TOPO_FILE)";
    }
  }
  if (files.empty()) {
    *source = "discovered on this host";
    return topo::discoverTopology();
  }
  std::vector<topo::Graph> graphs;
  for (const std::string& file : files) {
    BRAID_ASSIGN_OR_RETURN(topo::Graph graph, topo::loadTopologyFile(file));
    graphs.push_back(std::move(graph));
  }
  if (source->empty()) {
    *source = "read from " + files[0];
    for (size_t i = 1; i < files.size(); ++i) *source += ", " + files[i];
  }
  if (graphs.size() == 1) return std::move(graphs[0]);
  return topo::joinHosts(graphs);
}

int defaultRanks(const topo::Graph& graph) {
  const int gpus = static_cast<int>(graph.nodesOfType(topo::NodeType::kGpu).size());
  if (gpus > 0) return gpus;
  return std::max(2, static_cast<int>(graph.nodesOfType(topo::NodeType::kCpu).size()));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (int status = parseOptions(argc, argv, &options)) return status;
  if (options.lineFrom >= 0) {
    const double ns =
        braid::lineTransferNs(static_cast<int>(options.lineFrom), static_cast<int>(options.lineTo),
                              std::chrono::milliseconds(200));
    if (ns < 0) {
      fprintf(stderr,
              "braid-topo: could not measure cpu %ld -> cpu %ld (not two CPUs this "
              "process may run on, or never undisturbed)\n",
              options.lineFrom, options.lineTo);
      return 1;
    }
    printf("line latency: cpu %ld -> cpu %ld: %.0f ns one way\n", options.lineFrom, options.lineTo,
           ns);
    return 0;
  }

  topo::PlanOptions plan;
  if (!options.p2pLevel.empty()) {
    auto level = topo::parsePathType(options.p2pLevel);
    if (!level.ok()) {
      fprintf(stderr, "braid-topo: P2P level: %s\n", level.status().message().c_str());
      return 2;
    }
    plan.transports.p2pLevel = level.value();
  }
  auto allowed = topo::TransportSet::parse(options.transports);
  if (!allowed.ok()) {
    fprintf(stderr, "braid-topo: %s\n", allowed.status().message().c_str());
    return 2;
  }
  plan.transports.allowed = allowed.value();
  plan.search.maxChannels = static_cast<int>(options.maxChannels);
  plan.search.channelCapGBs = options.channelGBs;
  plan.search.crossNic = static_cast<int>(
      options.crossNic >= 0 ? options.crossNic : braid::env::getInt("CROSS_NIC", 2));
  // Point-to-point routes as a communicator plans them (BRAID_/NCCL_PXN_DISABLE, P2P_PXN_LEVEL).
  plan.p2p.crossNic = plan.search.crossNic;
  plan.p2p.pxnLevel = braid::env::getInt("PXN_DISABLE", 0) != 0
                          ? 0
                          : static_cast<int>(braid::env::getInt("P2P_PXN_LEVEL", 2));

  std::string source;
  auto graph = obtainGraph(options, &source);
  if (!graph.ok()) return fail(graph.status());
  if (!options.dump.empty()) {
    braid::Status written = topo::writeTopologyFile(graph.value(), options.dump);
    if (!written.ok()) return fail(written);
  }
  const topo::Paths paths(graph.value());
  const int nranks =
      options.nranks > 0 ? static_cast<int>(options.nranks) : defaultRanks(graph.value());
  auto placement = topo::placeRanksEvenly(graph.value(), nranks);
  if (!placement.ok()) return fail(placement.status());
  auto planned = topo::planTopology(graph.value(), paths, placement.value(), plan);
  if (!planned.ok()) return fail(planned.status());

  printf("Topology %s\n", source.c_str());
  if (!options.dump.empty()) printf("Written to %s in braid's format\n", options.dump.c_str());
  printf("\n%s", topo::describeMachine(graph.value()).c_str());
  printf("\n%s", topo::describePaths(graph.value(), paths).c_str());
  printf(
      "\nP2P level: %s; transports allowed: %s\n",
      plan.transports.p2pLevel ? topo::pathTypeName(*plan.transports.p2pLevel) : "default (by CPU)",
      plan.transports.allowed.describe().c_str());
  printf("%s", topo::describePlan(graph.value(), paths, planned.value()).c_str());
  printf("\nSummary: %s\n", topo::summarizeTopology(graph.value(), planned.value()).c_str());
  return 0;
}
