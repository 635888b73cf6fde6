// Parsing braid-perf's command line: nccl-tests' flags and defaults, plus
// --procs, --bind and --model.
#include "perf/options.h"

#include <getopt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "perf/collectives.h"

namespace braid::perf {
namespace {

const char* const kTypeNames[] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                                  "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
const char* const kOpNames[] = {"sum", "prod", "max", "min", "avg"};

void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s <collective>[,<collective>...] [options]\n"
          "  collectives: %s\n"
          "  (a comma-separated list runs each in turn, a table each, on the same ranks)\n"
          "  -b,--minbytes <n>     smallest size (K/M/G suffixes)      [32M]\n"
          "  -e,--maxbytes <n>     largest size                         [32M]\n"
          "  -i,--stepbytes <n>    size increment                       [1M]\n"
          "  -f,--stepfactor <f>   size multiplication factor (instead of -i)\n"
          "  -n,--iters <n>        timed iterations                     [20]\n"
          "  -w,--warmup_iters <n> warm-up iterations                   [5]\n"
          "  -c,--check <0/1>      check results                        [1]\n"
          "  -d,--datatype <t>     int8 uint8 int32 uint32 int64 uint64 half float double\n"
          "                        bfloat16 f8e4m3 f8e5m2, or all; a comma-separated list\n"
          "                        runs them in that order              [float]\n"
          "  -o,--op <op>          sum prod max min avg, or all; or a list [sum]\n"
          "  -r,--root <r>         root rank, or -1 for every rank      [0]\n"
          "  -t,--nthreads <n>     threads per process                  [1]\n"
          "  -g,--ngpus <n>        ranks per thread, driven by groups   [1]\n"
          "  -a,--average <0..3>   time reported: rank 0, avg, min, max [1]\n"
          "  -N,--run_cycles <n>   repeat the whole sweep n times       [1]\n"
          "  -z,--blocking <0/1>   accepted for compatibility; host calls always block\n"
          "  -R,--local_register <0/1/2>  1: host buffers from ncclMemAlloc: shared memory\n"
          "                        that the ranks of a host map, so zero-copy reads them in\n"
          "                        place; 2: as 1, and every buffer (device buffers too)\n"
          "                        from ncclMemAlloc registered as a symmetric window\n"
          "                        (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC)      [0]\n"
          "  --procs <n>           start n processes of this machine as ranks\n"
          "  --bind <core|none>    pin each rank to its own core when there are enough [none]\n"
          "  --model               add a model(us) column: the cost model's estimate of each\n"
          "                        row's call (ncclGroupSimulateEnd), aggregated like time (-a)\n"
          "  --idle_ms <n>         time each call alone after n ms of idleness (the ranks\n"
          "                        sleep, then meet), as after a compute phase      [0]\n"
          "  --psk_file <file>     encrypt braid's sockets with the key in the file (its\n"
          "                        first line, at least 32 bytes): ncclSetEncryption\n"
          "Without --procs, braid-perf joins as one process of a job started by mpirun\n"
          "(OMPI_COMM_WORLD_RANK/SIZE; across hosts the root is mpirun's host), srun\n"
          "(SLURM_PROCID/NTASKS; across nodes the root is srun's node) or a torchrun-style\n"
          "launcher (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); MASTER_ADDR and MASTER_PORT\n"
          "override the root for all three. Alone it runs -t x -g ranks in this process.\n",
          prog, collectiveNames().c_str());
}

bool parseSize(const char* text, size_t* out) {
  char* end = nullptr;
  double v = strtod(text, &end);
  if (end == text || v < 0) return false;
  double scale = 1;
  switch (*end) {
    case '\0':
      break;
    case 'K':
    case 'k':
      scale = 1024.0;
      ++end;
      break;
    case 'M':
    case 'm':
      scale = 1024.0 * 1024;
      ++end;
      break;
    case 'G':
    case 'g':
      scale = 1024.0 * 1024 * 1024;
      ++end;
      break;
    default:
      return false;
  }
  if (*end != '\0') return false;
  *out = static_cast<size_t>(v * scale);
  return true;
}

bool parseInt(const char* text, int* out) {
  char* end = nullptr;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0') return false;
  *out = static_cast<int>(v);
  return true;
}

// A comma-separated list of `names` (the enum's values in order), or "all" for every one of
// them, in the order given: `-d float,bfloat16 -N 5` alternates the two types in one process,
// so that a comparison of them pairs runs a moment apart. False for an unknown or repeated
// name, or an empty one.
template <typename Enum, size_t N>
bool parseNames(const char* text, const char* const (&names)[N], std::vector<Enum>* out) {
  out->clear();
  const std::string list(text);
  size_t from = 0;
  for (;;) {
    const size_t comma = list.find(',', from);
    const std::string name = list.substr(from, comma == std::string::npos ? comma : comma - from);
    bool known = false;
    for (size_t i = 0; i < N; ++i) {
      if (name != "all" && name != names[i]) continue;
      const Enum value = static_cast<Enum>(i);
      if (std::find(out->begin(), out->end(), value) != out->end()) return false;
      out->push_back(value);
      known = true;
    }
    if (!known) return false;
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return !out->empty();
}

}  // namespace

const char* typeName(ncclDataType_t t) {
  int i = static_cast<int>(t);
  return i >= 0 && i < ncclNumTypes ? kTypeNames[i] : "?";
}
const char* opName(ncclRedOp_t o) {
  int i = static_cast<int>(o);
  return i >= 0 && i < ncclNumOps ? kOpNames[i] : "?";
}
size_t typeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    default:
      return 8;
  }
}

bool parseOptions(int argc, char** argv, Options* o) {
  static const struct option kLong[] = {{"minbytes", required_argument, nullptr, 'b'},
                                        {"maxbytes", required_argument, nullptr, 'e'},
                                        {"stepbytes", required_argument, nullptr, 'i'},
                                        {"stepfactor", required_argument, nullptr, 'f'},
                                        {"iters", required_argument, nullptr, 'n'},
                                        {"warmup_iters", required_argument, nullptr, 'w'},
                                        {"check", required_argument, nullptr, 'c'},
                                        {"datatype", required_argument, nullptr, 'd'},
                                        {"op", required_argument, nullptr, 'o'},
                                        {"root", required_argument, nullptr, 'r'},
                                        {"nthreads", required_argument, nullptr, 't'},
                                        {"ngpus", required_argument, nullptr, 'g'},
                                        {"average", required_argument, nullptr, 'a'},
                                        {"run_cycles", required_argument, nullptr, 'N'},
                                        {"blocking", required_argument, nullptr, 'z'},
                                        {"local_register", required_argument, nullptr, 'R'},
                                        {"procs", required_argument, nullptr, 'P'},
                                        {"bind", required_argument, nullptr, 'B'},
                                        {"model", no_argument, nullptr, 'M'},
                                        {"idle_ms", required_argument, nullptr, 'I'},
                                        {"psk_file", required_argument, nullptr, 'K'},
                                        {"help", no_argument, nullptr, 'h'},
                                        {nullptr, 0, nullptr, 0}};
  const char* prog = argv[0];
  if (argc >= 2 && argv[1][0] != '-') {
    o->collectives.clear();
    const std::string list = argv[1];
    for (size_t at = 0; at <= list.size();) {
      const size_t comma = std::min(list.find(',', at), list.size());
      o->collectives.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
    --argc;
    ++argv;
  }
  for (const std::string& name : o->collectives) {
    if (findCollective(name) == nullptr) {
      fprintf(stderr, "%s: unknown collective '%s' (available: %s)\n", prog, name.c_str(),
              collectiveNames().c_str());
      usage(prog);
      return false;
    }
  }
  o->collective = o->collectives.front();
  optind = 1;
  int c;
  bool ok = true;
  while (ok &&
         (c = getopt_long(argc, argv, "b:e:i:f:n:w:c:d:o:r:t:g:a:N:z:R:h", kLong, nullptr)) != -1) {
    int blocking = 0;
    switch (c) {
      case 'b':
        ok = parseSize(optarg, &o->minBytes);
        break;
      case 'e':
        ok = parseSize(optarg, &o->maxBytes);
        break;
      case 'i':
        ok = parseSize(optarg, &o->stepBytes);
        o->stepFactor = 1;
        break;
      case 'f':
        o->stepFactor = strtod(optarg, nullptr);
        ok = o->stepFactor >= 1;
        break;
      case 'n':
        ok = parseInt(optarg, &o->iters) && o->iters > 0;
        break;
      case 'w':
        ok = parseInt(optarg, &o->warmupIters) && o->warmupIters >= 0;
        break;
      case 'c':
        ok = parseInt(optarg, &o->check);
        break;
      case 'd':
        ok = parseNames(optarg, kTypeNames, &o->types);
        break;
      case 'o':
        ok = parseNames(optarg, kOpNames, &o->ops);
        break;
      case 'r':
        ok = parseInt(optarg, &o->root) && o->root >= -1;
        break;
      case 't':
        ok = parseInt(optarg, &o->threads) && o->threads > 0;
        break;
      case 'g':
        ok = parseInt(optarg, &o->gpus) && o->gpus > 0;
        break;
      case 'a':
        ok = parseInt(optarg, &o->average) && o->average >= 0 && o->average <= 3;
        break;
      case 'N':
        ok = parseInt(optarg, &o->cycles) && o->cycles > 0;
        break;
      case 'z':
        ok = parseInt(optarg, &blocking);
        o->blocking = blocking != 0;
        break;
      case 'R': {
        int memAlloc = 0;
        ok = parseInt(optarg, &memAlloc) && memAlloc >= 0 && memAlloc <= 2;
        o->memAlloc = memAlloc != 0;
        o->symmetricWindows = memAlloc == 2;
        break;
      }
      case 'P':
        ok = parseInt(optarg, &o->procs) && o->procs > 0;
        break;
      case 'B':
        ok = strcmp(optarg, "core") == 0 || strcmp(optarg, "none") == 0;
        o->bind = strcmp(optarg, "core") == 0;
        break;
      case 'M':
        o->model = true;
        break;
      case 'I':
        ok = parseInt(optarg, &o->idleMs) && o->idleMs >= 0;
        break;
      case 'K':
        o->pskFile = optarg;
        ok = !o->pskFile.empty();
        break;
      case 'h':
        usage(prog);
        exit(0);
      default:
        ok = false;
    }
    if (!ok && c != '?') fprintf(stderr, "%s: bad value for -%c\n", prog, c);
  }
  if (ok && optind < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
    ok = false;
  }
  if (ok && o->minBytes > o->maxBytes) {
    fprintf(stderr, "%s: -b must not exceed -e\n", prog);
    ok = false;
  }
  if (!ok) usage(prog);
  return ok;
}

}  // namespace braid::perf
