// ncclGroupStart / ncclGroupEnd: operations issued inside a group are
// checked at once and run when the outermost group ends.
#pragma once

#include <functional>

#include "api/api_util.h"

namespace braid::api {

/// How deeply this thread is nested in groups (0 = not in a group).
int groupDepth();

/// Runs `op` now when not in a group; otherwise queues it for ncclGroupEnd.
ncclResult_t runOrDefer(Comm* comm, std::function<Status()> op);

}  // namespace braid::api
