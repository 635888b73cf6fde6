// Making the soak's communicators (comms.h).
#include "soak/comms.h"

#include <cstdlib>
#include <memory>

#include "api/api_test_util.h"
#include "braid_ext.h"

namespace braid::soak {
namespace {

// Each flavour forces what it names and leaves the rest to the cost model (and to whatever the
// environment of the run sets). The small FIFOs (64 KiB, BRAID_BUFFSIZE's least) make even a
// few hundred KiB travel in many slots, wrapping around them; several channels split every
// call. Algorithms a collective lacks fall back to the ring, as with NCCL_ALGO.
std::vector<Flavour> hostFlavours() {
  return {
      {"auto", false, {}},
      {"ring/simple", false, {{"BRAID_ALGO", "ring"}, {"BRAID_PROTO", "simple"}}},
      {"ring/ll", false, {{"BRAID_ALGO", "ring"}, {"BRAID_PROTO", "ll"}}},
      {"tree/simple", false, {{"BRAID_ALGO", "tree"}, {"BRAID_PROTO", "simple"}}},
      {"tree/ll", false, {{"BRAID_ALGO", "tree"}, {"BRAID_PROTO", "ll"}}},
      {"oneshot", false, {{"BRAID_ALGO", "oneshot"}}},
      {"ring/simple 4ch 64K",
       false,
       {{"BRAID_ALGO", "ring"},
        {"BRAID_PROTO", "simple"},
        {"BRAID_NCHANNELS", "4"},
        {"BRAID_BUFFSIZE", "65536"}}},
      {"tree/ll 2ch 64K",
       false,
       {{"BRAID_ALGO", "tree"},
        {"BRAID_PROTO", "ll"},
        {"BRAID_NCHANNELS", "2"},
        {"BRAID_BUFFSIZE", "65536"}}},
      {"deterministic 3ch", false, {{"BRAID_DETERMINISTIC", "1"}, {"BRAID_NCHANNELS", "3"}}},
      {"check-calls", false, {{"BRAID_CHECK_CALLS", "1"}}},
  };
}

}  // namespace

std::vector<Flavour> flavoursFor(Memory memory) {
  std::vector<Flavour> all;
  if (memory != Memory::kGpu) all = hostFlavours();
  if (memory != Memory::kHost) {
    for (Flavour f : hostFlavours()) {
      f.name = "gpu " + f.name;
      f.gpu = true;
      all.push_back(f);
    }
  }
  return all;
}

Communicators::~Communicators() {
  for (const Target& t : targets_) {
    if (t.comm != nullptr && !aborted_) ncclCommDestroy(t.comm);
    if (t.device != nullptr && t.stream != nullptr) t.device->streamDestroy(t.stream);
  }
  if (control_ != nullptr && !aborted_) ncclCommDestroy(control_);
}

void Communicators::abort() {
  if (aborted_) return;
  aborted_ = true;
  for (const Target& t : targets_) {
    if (t.comm != nullptr) ncclCommAbort(t.comm);
  }
  if (control_ != nullptr) ncclCommAbort(control_);
}

bool Communicators::create(const std::vector<Flavour>& flavours, const ncclUniqueId& id, int rank,
                           int nranks, std::string* error) {
  auto fail = [&](const std::string& what, ncclResult_t r) {
    *error = what + ": " + ncclGetErrorString(r) + " (" + ncclGetLastError(nullptr) + ")";
    return false;
  };
  flavours_ = flavours;
  ncclResult_t r = braidCommInitRankHost(&control_, nranks, id, rank, nullptr);
  if (r != ncclSuccess) return fail("the control communicator", r);
  // Under a launcher BRAID_COMM_ID names the control communicator's root; the other ids are
  // rank 0's own.
  unsetenv("BRAID_COMM_ID");
  unsetenv("NCCL_COMM_ID");
  const braidDeviceApi* device = nullptr;
  int devices = 0;
  for (const Flavour& f : flavours) {
    if (!f.gpu || device != nullptr) continue;
    device = braidGetDeviceApi();
    devices = device->deviceCount();
    if (devices == 0) {
      *error =
          "GPU communicators asked for and no GPU: set BRAID_EMULATE_GPUS=<n> (or use "
          "--emulate-gpus)";
      return false;
    }
  }
  for (const Flavour& f : flavours) {
    ncclUniqueId fid{};
    if (rank == 0 && (r = ncclGetUniqueId(&fid)) != ncclSuccess) return fail("ncclGetUniqueId", r);
    r = ncclBroadcast(&fid, &fid, sizeof fid, ncclUint8, 0, control_, nullptr);
    if (r != ncclSuccess) return fail("broadcasting the id of " + f.name, r);
    Target& t = targets_.emplace_back();
    {
      std::vector<std::unique_ptr<testing::ScopedEnv>> env;
      for (const auto& [name, value] : f.env) {
        env.push_back(std::make_unique<testing::ScopedEnv>(name, value));
      }
      if (f.gpu) {
        t.device = device;
        if ((r = device->setDevice(rank % devices)) != ncclSuccess) return fail("setDevice", r);
        r = ncclCommInitRank(&t.comm, nranks, fid, rank);
      } else {
        r = braidCommInitRankHost(&t.comm, nranks, fid, rank, nullptr);
      }
    }
    if (r != ncclSuccess) return fail("communicator " + f.name, r);
    if (f.gpu && (r = device->streamCreate(&t.stream)) != ncclSuccess) {
      return fail("a stream for " + f.name, r);
    }
  }
  return true;
}

}  // namespace braid::soak
