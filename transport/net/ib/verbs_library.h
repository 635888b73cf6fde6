// The VerbsApi of rdma-core's libibverbs.so.1, loaded with dlopen on first use.
#pragma once

#include "braid/status.h"
#include "transport/net/ib/verbs_api.h"

namespace braid::transport::ib {

/// The real library's table; an error saying why where libibverbs.so.1 is missing or too old.
/// Resolved once per process, from the handle topology discovery uses too (topology/libibverbs.h).
Result<const VerbsApi*> libraryVerbs();

}  // namespace braid::transport::ib
