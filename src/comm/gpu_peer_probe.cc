// The copy-and-compare check of peer access (gpu_peer_probe.h).
#include "comm/gpu_peer_probe.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "base/log.h"
#include "transport/cuda_ipc/gpu_region.h"

namespace braid::comm {
namespace {

using transport::cuda_ipc::FifoPlacement;
using transport::cuda_ipc::MappedRegion;
using transport::cuda_ipc::OwnedRegion;
using transport::cuda_ipc::RegionRecord;

/// Byte i of what `writer` writes: differs between writers and along the probe, never all zero.
unsigned char patternByte(int writer, size_t i) {
  return static_cast<unsigned char>((i * 131 + static_cast<size_t>(writer) * 17 + 1) ^ (i >> 8));
}

/// Writes this rank's pattern into the landing area of each probed peer. A write that cannot be
/// made is traced and skipped: where its reader counts on peer access, it finds the bytes
/// missing and falls back as for a corrupt write.
void writeToPeers(gpu::Runtime& rt, const Members& m, const std::vector<RegionRecord>& records,
                  const OwnedRegion& source, gpu::Stream stream) {
  for (int peer = 0; peer < m.nranks; ++peer) {
    if (!m.onOtherGpuOfHost(m.rank, peer)) continue;
    Result<std::unique_ptr<MappedRegion>> mapped = MappedRegion::open(rt, records[peer], "");
    Status wrote = mapped.status();
    if (wrote.ok()) {
      char* at = static_cast<char*>(mapped.value()->data()) + m.rank * kPeerProbeBytes;
      wrote = rt.copy(at, source.data(), kPeerProbeBytes, stream);
      if (wrote.ok()) wrote = rt.streamSynchronize(stream);
    }
    if (!wrote.ok()) {  // as where the GPU has no peer access: the reader does not look
      BRAID_TRACE("gpu: the peer-access check could not write into rank %d's memory: %s", peer,
                  wrote.message().c_str());
    }
  }
}

/// Says once per process and pair of GPUs that `writer`'s writes arrived corrupt.
void warnCorruptOnce(const Members& m, int writer, size_t wrong) {
  static std::mutex mutex;
  static std::set<std::pair<std::string, std::string>> warned;
  const char* from = m.peers()[writer].gpuBusId;
  const char* to = m.peers()[m.rank].gpuBusId;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert({from, to}).second) return;
  }
  BRAID_WARN(
      "gpu: peer access from the GPU of rank %d (%s) to the GPU of rank %d (%s) corrupted a test "
      "copy at init (%zu of %zu bytes wrong), though the GPU says it has peer access: FIFOs "
      "between them go through pinned host memory instead (slower). The system's peer-to-peer "
      "path is broken (PCIe ACS or IOMMU settings, a VM's passthrough)",
      writer, from, m.rank, to, wrong, kPeerProbeBytes);
}

}  // namespace

Status checkPeerWrites(gpu::Runtime& rt, const Members& m, gpu::Stream stream,
                       std::vector<bool>& reaches) {
  const int n = m.nranks;
  bool any = false;  // the same on every rank: each knows every rank's host and GPU
  for (int a = 0; a < n && !any; ++a) {
    for (int b = a + 1; b < n && !any; ++b) any = m.onOtherGpuOfHost(a, b);
  }
  if (!any) return Status::success();
  const size_t landingBytes = static_cast<size_t>(n) * kPeerProbeBytes;
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<OwnedRegion> landing,
                         OwnedRegion::create(rt, FifoPlacement::kDeviceMemory, "",
                                             std::vector<unsigned char>(landingBytes, 0), stream));
  std::vector<unsigned char> pattern(kPeerProbeBytes);
  for (size_t i = 0; i < kPeerProbeBytes; ++i) pattern[i] = patternByte(m.rank, i);
  BRAID_ASSIGN_OR_RETURN(
      std::unique_ptr<OwnedRegion> source,
      OwnedRegion::create(rt, FifoPlacement::kDeviceMemory, "", pattern, stream));
  std::vector<RegionRecord> records(n);
  records[m.rank] = landing->record();
  BRAID_TRY(m.bootstrap()->allGather(records.data(), sizeof(RegionRecord)));
  writeToPeers(rt, m, records, *source, stream);
  // Every write has landed (each writer waited for its copies) once every rank is here.
  BRAID_TRY(m.bootstrap()->barrier());
  std::vector<unsigned char> arrived(landingBytes);
  BRAID_TRY(rt.copy(arrived.data(), landing->data(), landingBytes, stream));
  BRAID_TRY(rt.streamSynchronize(stream));
  for (int writer = 0; writer < n; ++writer) {
    if (!m.onOtherGpuOfHost(writer, m.rank) || !reaches[writer]) continue;
    size_t wrong = 0;
    const unsigned char* got = arrived.data() + writer * kPeerProbeBytes;
    for (size_t i = 0; i < kPeerProbeBytes; ++i) wrong += got[i] != patternByte(writer, i);
    if (wrong == 0) continue;
    reaches[writer] = false;
    warnCorruptOnce(m, writer, wrong);
  }
  return Status::success();
}

}  // namespace braid::comm
