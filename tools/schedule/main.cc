// braid-schedule: prints the schedule a collective runs, without running it.
//
//   braid-schedule all_reduce|reduce_scatter|all_gather|broadcast|reduce
//                  --nranks 4 --count 1000 [--root 0] [--rank 1] [--chunk 256]
//                  [--slice 64] [--min-slice 16] [--channels 2]
//
// --count is NCCL's: elements per rank, i.e. recvcount for reduce_scatter and
// sendcount for all_gather. The same generators the communicator uses
// (src/algo), with the same defaults for a 4 MiB FIFO of float32, so what it
// prints is what a rank of such a communicator does (BRAID_DUMP_SCHEDULE=1
// prints it at run time).
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "algo/ring.h"

namespace {

void usage() {
  fprintf(stderr,
          "usage: braid-schedule all_reduce|reduce_scatter|all_gather|broadcast|reduce\n"
          "         --nranks N --count ELEMENTS [--root R] [--rank R] [--chunk ELEMENTS]\n"
          "         [--slice ELEMENTS] [--min-slice ELEMENTS] [--channels C]\n"
          "  --count is per rank (recvcount of reduce_scatter, sendcount of all_gather);\n"
          "  --root (default 0) is for broadcast and reduce;\n"
          "  without --rank, prints every rank's schedule\n");
}

bool parseArg(const char* text, long long* out) {
  char* end = nullptr;
  *out = strtoll(text, &end, 10);
  return end != text && *end == '\0' && *out >= 0;
}

// The generator for `name`, or null for a name it does not know.
using Generator = braid::Result<braid::algo::Schedule> (*)(const braid::algo::RingParams&, int);
Generator generatorFor(const std::string& name) {
  using braid::algo::RingParams;
  if (name == "all_reduce") {
    return [](const RingParams& p, int) { return braid::algo::ringAllReduce(p); };
  }
  if (name == "reduce_scatter") {
    return [](const RingParams& p, int) { return braid::algo::ringReduceScatter(p); };
  }
  if (name == "all_gather") {
    return [](const RingParams& p, int) { return braid::algo::ringAllGather(p); };
  }
  if (name == "broadcast") return braid::algo::ringBroadcast;
  if (name == "reduce") return braid::algo::ringReduce;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  Generator generate = argc >= 2 ? generatorFor(argv[1]) : nullptr;
  if (generate == nullptr) {
    usage();
    return 2;
  }
  braid::algo::RingParams p;
  p.chunkElems = (4 << 20) / 2 / sizeof(float);  // half of a 4 MiB FIFO
  p.maxSliceElems = (4 << 20) / 8 / sizeof(float);
  p.minSliceElems = (16 << 10) / sizeof(float);
  long long rank = -1;
  long long root = 0;
  for (int i = 2; i < argc; i += 2) {
    long long v = 0;
    if (i + 1 >= argc || !parseArg(argv[i + 1], &v)) {
      usage();
      return 2;
    }
    std::string flag = argv[i];
    if (flag == "--nranks")
      p.nranks = static_cast<int>(v);
    else if (flag == "--count")
      p.count = static_cast<size_t>(v);
    else if (flag == "--root")
      root = v;
    else if (flag == "--rank")
      rank = v;
    else if (flag == "--chunk")
      p.chunkElems = static_cast<size_t>(v);
    else if (flag == "--slice")
      p.maxSliceElems = static_cast<size_t>(v);
    else if (flag == "--min-slice")
      p.minSliceElems = static_cast<size_t>(v);
    else if (flag == "--channels")
      p.nchannels = static_cast<int>(v);
    else {
      usage();
      return 2;
    }
  }
  if (p.nranks <= 0 || rank >= p.nranks) {
    fprintf(stderr, "braid-schedule: need --nranks N > 0 and --rank below it\n");
    return 2;
  }
  for (int r = 0; r < p.nranks; ++r) {
    if (rank >= 0 && r != rank) continue;
    p.rank = r;
    auto schedule = generate(p, static_cast<int>(std::min<long long>(root, INT_MAX)));
    if (!schedule.ok()) {
      fprintf(stderr, "braid-schedule: %s\n", schedule.status().message().c_str());
      return 1;
    }
    fputs(braid::algo::formatSchedule(schedule.value(), braid::DataType::kFloat32).c_str(), stdout);
  }
  return 0;
}
