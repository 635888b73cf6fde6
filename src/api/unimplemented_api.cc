// Entry points of NCCL 2.28 that braid does not implement yet. Each fails
// with ncclInvalidUsage and a ncclGetLastError() text that says so and what
// is planned: never a silent success.
#include "api/api_util.h"

using braid::api::notImplemented;

BRAID_NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size,
               ncclWindow_t* win, int winFlags) {
  (void)comm, (void)buff, (void)size, (void)win, (void)winFlags;
  return notImplemented("ncclCommWindowRegister", "symmetric windows are planned");
}

BRAID_NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  (void)comm, (void)win;
  return notImplemented("ncclCommWindowDeregister", "symmetric windows are planned");
}
