// NCCL 2.30's ncclCommGrow and the id it takes (ncclCommGetUniqueId): the communicator's ranks
// and new ones make a larger communicator, as ncclCommSplit makes a smaller one (Comm::grow).
// The root's process makes the id, so it runs the new communicator's rendezvous; one id per
// grow, used up by it, as NCCL's.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "api/api_util.h"
#include "api/config_view.h"
#include "api/group.h"

using braid::Comm;
using braid::Status;
using braid::api::commFrom;
using braid::api::report;

BRAID_NCCL_API(ncclResult_t, ncclCommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (uniqueId == nullptr) return report(braid::invalidArgument("uniqueId is NULL"));
  std::lock_guard<std::mutex> lock(comm->growMutex);
  if (comm->growIdPending) {
    return report(braid::invalidUsage(
        "ncclCommGetUniqueId: the id made for the last grow has not been used by ncclCommGrow "
        "yet; one id per grow"));
  }
  auto id = Comm::newUniqueId();
  if (!id.ok()) return report(id.status());
  memcpy(comm->growId.internal, id.value().bytes, sizeof(comm->growId.internal));
  comm->growIdPending = true;
  *uniqueId = comm->growId;
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommGrow, ncclComm_t comm, int nRanks,
               const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm, ncclConfig_t* config) {
  if (newcomm == nullptr) return report(braid::invalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  Status checked = braid::api::checkConfig(config);
  if (!checked.ok()) return report(checked);
  if (comm == nullptr) {
    // A new rank: it joins the grown communicator as any rank joins one.
    if (uniqueId == nullptr) {
      return report(braid::invalidArgument(
          "ncclCommGrow: a new rank (comm NULL) needs the id the root made with "
          "ncclCommGetUniqueId"));
    }
    return pncclCommInitRankConfig(newcomm, nRanks, *uniqueId, rank, config);
  }
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (rank != -1) {
    return report(braid::invalidArgument(
        "ncclCommGrow: the ranks of comm keep theirs and pass rank -1, got " +
        std::to_string(rank)));
  }
  std::shared_ptr<braid::UniqueId> id;
  if (uniqueId != nullptr) {
    std::lock_guard<std::mutex> lock(comm->growMutex);
    if (!comm->growIdPending ||
        memcmp(uniqueId->internal, comm->growId.internal, sizeof(uniqueId->internal)) != 0) {
      return report(braid::invalidUsage(
          "ncclCommGrow: the root passes the id ncclCommGetUniqueId made on this communicator, "
          "unused so far"));
    }
    id = std::make_shared<braid::UniqueId>();
    memcpy(id->bytes, uniqueId->internal, sizeof(id->bytes));
  }
  const braid::api::CommSettings settings =
      braid::api::CommSettings::forChild(config, comm->settings);
  Comm* parent = c.value();
  return braid::api::runOrDefer(parent, [comm, parent, nRanks, id, newcomm, settings] {
    braid::CommOptions child;
    settings.applyTo(child);
    BRAID_ASSIGN_OR_RETURN(std::unique_ptr<Comm> made, parent->grow(nRanks, id.get(), child));
    if (id != nullptr) {
      std::lock_guard<std::mutex> lock(comm->growMutex);
      comm->growIdPending = false;  // used up
    }
    *newcomm = braid::api::newHandle(std::move(made), settings);
    return Status::success();
  });
}
