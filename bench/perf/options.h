// braid-perf's command line: nccl-tests' flags, plus --procs, --bind and --model.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nccl.h"

namespace braid::perf {

struct Options {
  std::string collective = "all_reduce";
  /// Every collective to run, in order, a table each on the same communicator (a comma-separated
  /// list in place of one collective); `collective` is the one being run.
  std::vector<std::string> collectives{"all_reduce"};
  size_t minBytes = 32 << 20;
  size_t maxBytes = 32 << 20;
  size_t stepBytes = 1 << 20;
  double stepFactor = 1;  ///< > 1: sizes grow by this factor (-f); else by stepBytes (-i)
  int iters = 20;
  int warmupIters = 5;
  /// --idle_ms: each timed call comes alone after this long with nothing to do (all ranks
  /// sleep, then meet), as the first collective after a compute phase; 0: back to back.
  int idleMs = 0;
  int check = 1;
  /// -d: the types to run, one table section after another (-d all: every type).
  std::vector<ncclDataType_t> types{ncclFloat};
  /// -o: the operators of reducing collectives (-o all: every built-in one).
  std::vector<ncclRedOp_t> ops{ncclSum};
  int root = 0;     ///< -r: the root of rooted collectives; -1: every rank in turn
  int threads = 1;  ///< -t: threads per process
  int gpus = 1;     ///< -g: ranks per thread, driven through groups
  int average = 1;  ///< -a: 0 rank 0, 1 average, 2 min, 3 max over ranks
  int cycles = 1;   ///< -N: how many times to run the whole size sweep
  int procs = 0;    ///< --procs: start this many processes of this machine (0: no)
  bool blocking = false;
  /// -R 1 or 2: host buffers from ncclMemAlloc (shared memory the ranks of a host map), as
  /// nccl-tests' -R registers its buffers.
  bool memAlloc = false;
  /// -R 2 (nccl-tests' symmetric registration): every buffer the calls use from ncclMemAlloc,
  /// registered with ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC), so that the symmetric
  /// kernels may run the calls.
  bool symmetricWindows = false;
  /// -R 2: how many of the job's windows the library made NULL (it declined them; the calls
  /// then run without them), summed over the ranks once registered; -1 before.
  int nullWindows = -1;
  /// --bind core|none: one core per rank when there are enough. Off by default:
  /// on the 2-vCPU VMs here pinning made 8 B all_reduce slower as often as faster.
  bool bind = false;
  /// --model: a model(us) column, what the library's cost model predicts for
  /// each row's call (ncclGroupSimulateEnd), aggregated over ranks as -a says.
  bool model = false;
  /// --psk_file: a file whose first line is the key ncclSetEncryption seals the sockets with;
  /// empty: no encryption.
  std::string pskFile;
};

/// Parses argv; on error prints usage to stderr and returns false.
bool parseOptions(int argc, char** argv, Options* out);

const char* typeName(ncclDataType_t t);
const char* opName(ncclRedOp_t o);
size_t typeSize(ncclDataType_t t);

}  // namespace braid::perf
