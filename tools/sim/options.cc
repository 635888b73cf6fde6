#include "options.h"

#include <cstdlib>
#include <string>

#include "svg.h"
#include "units.h"

namespace braid::sim {
namespace {

// 64 MiB: a large gradient bucket, and at 4096 ranks the largest size whose
// ring steps are one slice each, so that the default run takes seconds.
constexpr uint64_t kDefaultBytes = uint64_t(64) << 20;

Result<Collective> parseCollective(const std::string& name) {
  for (Collective c : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                       Collective::kBroadcast, Collective::kReduce}) {
    if (name == collectiveFlagName(c)) return c;
  }
  return invalidArgument("unknown collective '" + name +
                         "' (all_reduce, reduce_scatter, all_gather, broadcast, reduce)");
}

Result<long long> parseInteger(const std::string& flag, const std::string& text, long long min,
                               long long max) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min || v > max) {
    return invalidArgument(flag + " needs an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got '" + text + "'");
  }
  return v;
}

// What the flags said, before defaults that depend on each other are filled in.
struct Given {
  bool nranks = false;
  bool machine = false;
};

Status applyFlag(CommandLine& c, Given& given, const std::string& flag, const std::string& value) {
  Study& s = c.study;
  if (flag == "--coll") {
    BRAID_ASSIGN_OR_RETURN(s.collective, parseCollective(value));
  } else if (flag == "--algo") {
    if (value != "ring" && value != "tree") {
      return invalidArgument("unknown algorithm '" + value + "' (ring, tree)");
    }
    s.algorithm = value == "ring" ? algo::Algorithm::kRing : algo::Algorithm::kTree;
  } else if (flag == "--protocol") {
    if (value != "simple" && value != "ll") {
      return invalidArgument("unknown protocol '" + value + "' (simple, ll)");
    }
    s.protocol = value == "simple" ? algo::Protocol::kSimple : algo::Protocol::kLl;
  } else if (flag == "--nranks") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 1, 1 << 20));
    s.nranks = static_cast<int>(n);
    given.nranks = true;
  } else if (flag == "--machine") {
    BRAID_ASSIGN_OR_RETURN(s.machine, parseMachine(value));
    given.machine = true;
  } else if (flag == "--bytes") {
    BRAID_ASSIGN_OR_RETURN(s.bytes, parseBytes(value));
  } else if (flag == "--channels") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 1, 64));
    s.nchannels = static_cast<int>(n);
  } else if (flag == "--root") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 0, 1 << 20));
    s.root = static_cast<int>(n);
  } else if (flag == "--fifo") {
    BRAID_ASSIGN_OR_RETURN(uint64_t bytes, parseBytes(value));
    if (bytes < 64 * 8) return invalidArgument("--fifo needs at least 512 bytes (8 slots of 64)");
    s.fifoBytes = bytes;
  } else if (flag == "--threads") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 1, 256));
    s.threads = static_cast<int>(n);
  } else if (flag == "--seed") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 0, INT64_MAX));
    c.seed = static_cast<uint64_t>(n);
  } else if (flag == "--check-count") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 1, INT64_MAX));
    c.checkShape.count = static_cast<uint64_t>(n);
  } else if (flag == "--check-chunk") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 1, INT64_MAX));
    c.checkShape.chunkElems = static_cast<size_t>(n);
  } else if (flag == "--check-slice") {
    BRAID_ASSIGN_OR_RETURN(long long n, parseInteger(flag, value, 1, INT64_MAX));
    c.checkShape.sliceElems = static_cast<size_t>(n);
  } else if (flag == "--svg") {
    if (value.empty()) return invalidArgument("--svg needs a file name");
    c.svgPath = value;
  } else if (flag == "--sweep") {
    const size_t colon = value.find(':');
    if (colon == std::string::npos) {
      return invalidArgument("--sweep needs MIN:MAX (e.g. 8:4G), got '" + value + "'");
    }
    BRAID_ASSIGN_OR_RETURN(c.sweepMin, parseBytes(value.substr(0, colon)));
    BRAID_ASSIGN_OR_RETURN(c.sweepMax, parseBytes(value.substr(colon + 1)));
    if (c.sweepMin == 0 || c.sweepMin > c.sweepMax) {
      return invalidArgument("--sweep needs 0 < MIN <= MAX, got '" + value + "'");
    }
    c.sweep = true;
  } else {
    return invalidArgument("unknown flag '" + flag + "' (see --help)");
  }
  return Status::success();
}

// Defaults that depend on other flags, and checks across flags.
Status finish(CommandLine& c, const Given& given) {
  Study& s = c.study;
  if (!given.machine) {
    if (!given.nranks) s.nranks = 4096;
    s.machine = defaultMachine(s.nranks);
  } else if (!given.nranks) {
    s.nranks = s.machine.ranks();
  }
  if (s.nranks > s.machine.ranks()) {
    return invalidArgument("--nranks " + std::to_string(s.nranks) + " does not fit --machine (" +
                           std::to_string(s.machine.ranks()) + " GPUs)");
  }
  if (s.bytes == 0) s.bytes = kDefaultBytes;
  if (s.root >= s.nranks) {
    return invalidArgument("--root " + std::to_string(s.root) + " is not a rank of " +
                           std::to_string(s.nranks));
  }
  if (!c.svgPath.empty() && s.nranks > kMaxDrawnRanks) {
    return invalidArgument("--svg draws at most " + std::to_string(kMaxDrawnRanks) +
                           " ranks; got --nranks " + std::to_string(s.nranks));
  }
  if (c.sweep && s.collective != Collective::kAllReduce && s.collective != Collective::kBroadcast &&
      s.collective != Collective::kReduce) {
    return invalidArgument(std::string("--sweep compares ring and tree, and braid has no tree ") +
                           "for " + collectiveName(s.collective));
  }
  BRAID_TRY(checkSupported(s.collective, s.algorithm));
  return Status::success();
}

}  // namespace

Result<CommandLine> parseCommandLine(int argc, const char* const* argv) {
  CommandLine c;
  Given given;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      c.help = true;
      return c;
    }
    if (flag == "--no-check") {
      c.check = false;
      continue;
    }
    if (flag == "--no-time") {
      c.time = false;
      continue;
    }
    if (flag == "--in-place") {
      c.inPlace = true;
      continue;
    }
    std::string value;
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag.rfind("--", 0) == 0 && i + 1 < argc) {
      value = argv[++i];
    } else {
      return invalidArgument(flag.rfind("--", 0) == 0 ? flag + " needs a value"
                                                      : "unexpected argument '" + flag + "'");
    }
    BRAID_TRY(applyFlag(c, given, flag, value));
  }
  BRAID_TRY(finish(c, given));
  return c;
}

std::string usageText() {
  return R"(usage: braid-sim [flags]

Runs every rank's schedule of one collective, as braid's generators make it:
  (a) symbolically, proving that every rank ends with the right data;
  (b) on a machine model, slice by slice on its links, to time it (beside
      the tuner's cost model);
  (c) with --sweep, ring against tree at every power-of-two size, to find
      where the ring starts to win;
  (d) with --svg, drawn as a picture (16 ranks at most).

  --coll C         all_reduce (default), reduce_scatter, all_gather, broadcast, reduce
  --algo A         ring (default) or tree (all_reduce, broadcast, reduce)
  --nranks N       ranks (default: every GPU of --machine; 4096 without it)
  --machine SPEC   NODESxGPUS then key=value, comma-separated; keys: nodes, gpus,
                   nics (per node; default one per GPU), nvlink, net (bandwidths,
                   per GPU and per NIC, each direction: 450GB/s, 400Gb/s),
                   nvlink-lat, net-lat (per hop: 1us, 500ns), nvlink-lat-ll,
                   net-lat-ll (LL's hop latencies; default Simple's)
                   default: 512x8,nvlink=450GB/s,net=400Gb/s,nvlink-lat=1us,net-lat=5us
                   (nodes of 8 GPUs, enough for --nranks)
  --bytes SIZE     size of the call as nccl-tests counts it (default 64M; K, M, G = 2^10...)
  --channels C     channels per rank (default 1)
  --protocol P     simple (default) or ll (half the bandwidth)
  --root R         root of broadcast and reduce (default 0)
  --fifo SIZE      bytes of a connection's FIFO, BRAID_BUFFSIZE (default 4M)
  --sweep MIN:MAX  ring and tree all_reduce (or --coll broadcast/reduce) at every
                   power of two from MIN to MAX bytes, and the crossover size
  --svg FILE       draw the timed schedule (up to 16 ranks)
  --no-check       skip the symbolic check
  --no-time        skip the timing
  --in-place       check the in-place call (sendbuff and recvbuff alias)
  --check-count E, --check-chunk E, --check-slice E
                   elements of the checked call, per chunk and per slice
                   (default: a few per chunk, sized for the rank count)
  --seed S         seeds the ranks' random keys of the check
  --threads T      threads generating schedules (default: every core)
  -h, --help       this text

Exit status: 0 when every check passed, 1 when a check or simulation failed,
2 for bad flags.
)";
}

}  // namespace braid::sim
