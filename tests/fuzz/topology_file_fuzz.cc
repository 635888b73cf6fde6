// libFuzzer target: a topology file in any format (braid's, NCCL's, hwloc's),
// read by loadTopologyFile as BRAID_TOPO_FILE and braid-topo --load read it.
// Whatever the bytes, the loader returns a graph or a refusal naming the
// file; a graph it returns survives braid's writer (fuzz_check.h).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_check.h"
#include "topology/topology_file.h"

namespace {

// One scratch file per process (libFuzzer's -jobs run several), removed at exit.
class ScratchFile {
 public:
  ScratchFile() {
    char name[] = "/tmp/braid_topology_file_fuzz.XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) braid::fuzz::fail("mkstemp failed");
    close(fd);
    path_ = name;
  }
  ~ScratchFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile scratch;
  FILE* file = fopen(scratch.path().c_str(), "wb");
  if (file == nullptr) braid::fuzz::fail("cannot write " + scratch.path());
  if (size > 0 && fwrite(data, 1, size, file) != size) braid::fuzz::fail("short write");
  fclose(file);
  braid::Result<braid::topology::Graph> graph = braid::topology::loadTopologyFile(scratch.path());
  if (!graph.ok()) {
    braid::fuzz::checkRefusal(graph.status(), scratch.path(), /*anywhere=*/true);
    return 0;
  }
  braid::fuzz::checkRoundTrip(graph.value());
  return 0;
}
