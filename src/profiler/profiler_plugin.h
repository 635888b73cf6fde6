// One interface over every version of NCCL's profiler plugin table (profiler_abi.h): braid
// describes an event once, in its own struct (Event), and the loaded version's adapter
// (profiler_versions.cc) writes that version's descriptor from it, leaving out what the version
// does not know (an event type it lacks starts nothing, as NCCL's adapters do).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "profiler/profiler_abi.h"

namespace braid::profiler {

/// A collective's fields, as NCCL's coll descriptor gives them (names in NCCL's words).
struct CollFields {
  uint64_t seqNumber = 0;  ///< this communicator's collectives of this func before it
  const char* func = "";   ///< "AllReduce", ...
  const void* sendBuff = nullptr;
  void* recvBuff = nullptr;
  size_t count = 0;
  int root = 0;
  const char* datatype = "";  ///< "ncclFloat32", ...
  uint8_t nChannels = 0;
  const char* algo = "";     ///< "RING", "TREE", or braid's own ("ONE_SHOT", "ZERO_COPY")
  const char* proto = "";    ///< "SIMPLE", "LL"
  void* apiEvent = nullptr;  ///< v5 on: the collective API event it came from (its parentObj)
};

/// A send's or receive's fields.
struct P2pFields {
  const char* func = "";  ///< "Send" or "Recv"
  void* buff = nullptr;
  const char* datatype = "";
  size_t count = 0;
  int peer = -1;
  uint8_t nChannels = 0;
  void* apiEvent = nullptr;  ///< v5 on: the point-to-point API event it came from
};

/// A collective or point-to-point call as the application made it (NCCL's collApi and p2pApi
/// descriptors, v5 on); `root` is the collective's.
struct ApiFields {
  const char* func = "";  ///< "AllReduce", "Send", ...
  size_t count = 0;
  const char* datatype = "";
  int root = 0;
  void* stream = nullptr;
  bool graphCaptured = false;
};

/// One event as braid describes it: its type (a profabi bit) and the fields of that type.
struct Event {
  uint64_t type = 0;
  int rank = 0;
  /// The group a collective or point-to-point event belongs to; the op a step belongs to; the
  /// call (collective or point-to-point event) a proxy op belongs to.
  void* parent = nullptr;
  CollFields coll;
  P2pFields p2p;
  /// collApi and p2pApi; a group API event reads its graphCaptured, a kernel launch its stream.
  ApiFields api;
  int groupDepth = 0;  ///< groupApi
  profabi::ProxyOpDescr proxyOp{};
  int step = 0;
  profabi::NetPluginDescr netPlugin{};
};

/// What init tells the plugin about the communicator (v4 and later take it).
struct CommIdentity {
  uint64_t commHash = 0;
  const char* commName = "";
  int nNodes = 1;
  int nranks = 1;
  int rank = 0;
};

/// A loaded plugin's table, any version, as braid calls it.
class ProfilerPlugin {
 public:
  virtual ~ProfilerPlugin() = default;
  virtual int version() const = 0;
  virtual std::string name() const = 0;
  /// The plugin's init: its context for the communicator and the events it wants.
  virtual ncclResult_t init(void** context, int* mask, const CommIdentity& comm) = 0;
  /// Starts `event`; null where the plugin started nothing (or the version lacks the type).
  virtual void* start(void* context, const Event& event) = 0;
  virtual void stop(void* handle) = 0;
  /// A proxy step's state, with the bytes it moves (v4 and later carry them).
  virtual void recordStep(void* handle, profabi::ncclProfilerEventState_t state, size_t bytes) = 0;
  /// A group API event's state (v5 and later), with no arguments, as NCCL records it.
  virtual void recordGroupApi(void* handle, profabi::ncclProfilerEventState_t state) = 0;
  /// A network plugin's event was updated with `data` (v4 and later carry it; v1 to v3 are told
  /// nothing, as NCCL's adapters tell them nothing).
  virtual void recordNet(void* handle, void* data) = 0;
  virtual void finalize(void* context) = 0;
};

/// The adapter for `table`, which a library exported as ncclProfiler_v`version`.
std::unique_ptr<ProfilerPlugin> adoptProfilerTable(int version, const void* table);

}  // namespace braid::profiler
