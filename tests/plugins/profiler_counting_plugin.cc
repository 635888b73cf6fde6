// A profiler plugin written for braid's tests (docs/profiling.md): it counts the events braid
// starts and stops, per type, and checks what NCCL's contract promises a plugin: every handle it
// is asked to stop is one it started and has not stopped; a collective's or point-to-point's
// group is open when the call starts and stays open until the call stops; a proxy step's op and
// a proxy op's call are events it started; the API events (v6) come in NCCL's order, a call's
// API event under a running group API event and the call under its API event. At finalize it
// appends one line of counts for the communicator to the file BRAID_TEST_PROFILER_OUT names, after
// a line per collective and point-to-point event with its fields, so that a test reads what every
// rank saw.
//
// One source, the variants by macro: v6 (the default), v4 (BRAID_TEST_PROFILER_V4) and v1
// (BRAID_TEST_PROFILER_V1), each exporting that table only; BRAID_TEST_PROFILER_FAILING_INIT,
// a v6 whose init fails. BRAID_TEST_PROFILER_MASK (a number) is the activation mask init returns,
// by default group, coll, p2p, proxy op and proxy step.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <string>

#include "src/profiler/profiler_abi.h"

using namespace braid::profabi;  // NOLINT(google-build-using-namespace): the ABI's names

namespace {

#if defined(BRAID_TEST_PROFILER_V1)
constexpr int kVersion = 1;
using Descr = ncclProfilerEventDescr_v1_t;
using Args = ncclProfilerEventStateArgs_v1_t;
#elif defined(BRAID_TEST_PROFILER_V4)
constexpr int kVersion = 4;
using Descr = ncclProfilerEventDescr_v4_t;
using Args = ncclProfilerEventStateArgs_v4_t;
#else
constexpr int kVersion = 6;
using Descr = ncclProfilerEventDescr_v6_t;
using Args = ncclProfilerEventStateArgs_v6_t;
#endif

constexpr int kTypes = 15;
constexpr const char* kTypeNames[kTypes] = {"group",     "coll",      "p2p",      "proxyOp",
                                            "proxyStep", "proxyCtrl", "kernelCh", "netPlugin",
                                            "groupApi",  "collApi",   "p2pApi",   "kernelLaunch",
                                            "ceColl",    "ceSync",    "ceBatch"};

int typeIndex(uint64_t type) {
  for (int i = 0; i < kTypes; ++i) {
    if (type == (uint64_t{1} << i)) return i;
  }
  return -1;
}

struct Context;

struct Event {
  Context* context;
  int type;  // typeIndex
  bool stopped = false;
  int openChildren = 0;  // calls of a group, not stopped yet
  Event* group = nullptr;
  int apiState = 0;  // a group API event: 1 once ncclGroupStart's part ended, 2 once the end began
};

struct Context {
  int rank = -1;
  std::string name;
  int starts[kTypes] = {};
  int stops[kTypes] = {};
  int steps = 0;              // recordEventState calls on proxy steps
  long stepBytes = 0;         // their transSize (v4 and later)
  int callOutsideGroup = 0;   // a call whose group was not an open group event
  int groupStoppedEarly = 0;  // a group stopped while one of its calls ran
  int orphanSteps = 0;        // a step whose op is not a started op
  int orphanOps = 0;          // an op whose parent is given but is not a started call
  int unparentedOps = 0;      // an op that moved slots while no call ran (parent null)
  int orphanNet = 0;          // a network plugin's event whose parent is given but no step
  int netUpdates = 0;         // recordEventState calls on network plugin events
  int unknownTypes = 0;
  // The API events (v5 on): a call API event or a kernel launch whose parent is not a running
  // group API event; a call whose API parent is not a call API event of its kind; a group API
  // event whose states did not come in order (start's end, then end's start, then its stop).
  int orphanApis = 0;
  int orphanCalls = 0;
  int apiParented = 0;  // calls whose parent is their API event
  int badGroupStates = 0;
  std::string lines;  // one per call event, with its fields
  std::deque<Event> events;
};

std::mutex gMutex;  // every context's state: proxies start and stop from their own threads
std::set<Event*> gStarted;
int gBadStops = 0;  // handles never started, or stopped twice
int gInits = 0;

bool started(void* handle, int type) {
  auto it = gStarted.find(static_cast<Event*>(handle));
  return it != gStarted.end() && (*it)->type == type;
}

// The collective's and point-to-point's fields, in the words (or numbers) of the version.
template <typename D>
void describeCall(Context* c, const D& d) {
  char line[512];
  if (d.type == kColl) {
#if defined(BRAID_TEST_PROFILER_V1)
    snprintf(line, sizeof(line),
             "coll seq=%llu func=%d count=%zu root=%d datatype=%d algo=%d proto=%d channels=%d\n",
             static_cast<unsigned long long>(d.coll.seqNumber), d.coll.func, d.coll.count,
             d.coll.root, d.coll.datatype, d.coll.algo, d.coll.proto, d.coll.nMaxChannels);
#else
    snprintf(line, sizeof(line),
             "coll seq=%llu func=%s count=%zu root=%d datatype=%s algo=%s proto=%s\n",
             static_cast<unsigned long long>(d.coll.seqNumber), d.coll.func, d.coll.count,
             d.coll.root, d.coll.datatype, d.coll.algo, d.coll.proto);
#endif
  } else {
#if defined(BRAID_TEST_PROFILER_V1)
    snprintf(line, sizeof(line), "p2p func=%d peer=%d count=%zu datatype=%d\n", d.p2p.func,
             d.p2p.peer, d.p2p.count, d.p2p.datatype);
#else
    snprintf(line, sizeof(line), "p2p func=%s peer=%d count=%zu datatype=%s\n", d.p2p.func,
             d.p2p.peer, d.p2p.count, d.p2p.datatype);
#endif
  }
  c->lines += line;
}

// The group a call belongs to: v5 and later give it beside the (API) parent.
void* callGroup(const Descr& d) {
#if defined(BRAID_TEST_PROFILER_V1) || defined(BRAID_TEST_PROFILER_V4)
  return d.parentObj;
#else
  return d.type == kColl ? d.coll.parentGroup : d.p2p.parentGroup;
#endif
}

ncclResult_t startEvent(void* context, void** handle, Descr* d) {
  auto* c = static_cast<Context*>(context);
  std::lock_guard<std::mutex> lock(gMutex);
  *handle = nullptr;
  const int type = typeIndex(d->type);
  if (type < 0) {
    ++c->unknownTypes;
    return ncclSuccess;
  }
  if (c->rank < 0) c->rank = d->rank;  // v1 to v3 learn it from the events
  c->events.push_back({c, type});
  Event* e = &c->events.back();
  ++c->starts[type];
  if (d->type == kColl || d->type == kP2p) {
    auto* group = static_cast<Event*>(callGroup(*d));
    if (!started(group, typeIndex(kGroup)) || group->stopped) {
      ++c->callOutsideGroup;
    } else {
      e->group = group;
      ++group->openChildren;
    }
    describeCall(c, *d);
    if (kVersion >= 5 && d->parentObj != nullptr) {
      const int api = typeIndex(d->type == kColl ? kCollApi : kP2pApi);
      if (started(d->parentObj, api)) {
        ++c->apiParented;
      } else {
        ++c->orphanCalls;
      }
    }
  } else if (d->type == kCollApi || d->type == kP2pApi || d->type == kKernelLaunch) {
    auto* group = static_cast<Event*>(d->parentObj);
    if (!started(group, typeIndex(kGroupApi)) || group->stopped) ++c->orphanApis;
  } else if (d->type == kProxyStep) {
    if (!started(d->parentObj, typeIndex(kProxyOp))) ++c->orphanSteps;
  } else if (d->type == kNetPlugin) {
    if (d->parentObj != nullptr && !started(d->parentObj, typeIndex(kProxyStep))) ++c->orphanNet;
  } else if (d->type == kProxyOp) {
    if (d->parentObj == nullptr) {
      ++c->unparentedOps;
    } else if (!started(d->parentObj, typeIndex(kColl)) &&
               !started(d->parentObj, typeIndex(kP2p))) {
      ++c->orphanOps;
    }
  }
  gStarted.insert(e);
  *handle = e;
  return ncclSuccess;
}

ncclResult_t stopEvent(void* handle) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto* e = static_cast<Event*>(handle);
  if (gStarted.count(e) == 0 || e->stopped) {
    ++gBadStops;
    return ncclSuccess;
  }
  e->stopped = true;
  ++e->context->stops[e->type];
  if (e->type == typeIndex(kGroupApi) && e->apiState != 2) ++e->context->badGroupStates;
  if (e->openChildren != 0) ++e->context->groupStoppedEarly;
  if (e->group != nullptr) --e->group->openChildren;
  return ncclSuccess;
}

ncclResult_t recordEventState(void* handle, ncclProfilerEventState_t state, Args* args) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto* e = static_cast<Event*>(handle);
  if (gStarted.count(e) == 0 || e->stopped) {
    ++gBadStops;
    return ncclSuccess;
  }
  if (state == ncclProfilerNetPluginUpdate) ++e->context->netUpdates;
  if (state == ncclProfilerGroupStartApiStop || state == ncclProfilerGroupEndApiStart) {
    const int want = state == ncclProfilerGroupStartApiStop ? 0 : 1;
    if (e->type != typeIndex(kGroupApi) || e->apiState != want || args != nullptr) {
      ++e->context->badGroupStates;
    }
    e->apiState = want + 1;
  }
  if (state == ncclProfilerProxyStepSendWait || state == ncclProfilerProxyStepRecvWait) {
    ++e->context->steps;
#if !defined(BRAID_TEST_PROFILER_V1)
    if constexpr (kVersion >= 4)
      e->context->stepBytes += static_cast<long>(args->proxyStep.transSize);
#endif
  }
  (void)args;
  return ncclSuccess;
}

uint64_t activationMask() {
  const char* mask = getenv("BRAID_TEST_PROFILER_MASK");
  return mask != nullptr ? strtoull(mask, nullptr, 0)
                         : kGroup | kColl | kP2p | kProxyOp | kProxyStep;
}

ncclResult_t initContext(void** context, int* mask, const char* name, int rank) {
#if defined(BRAID_TEST_PROFILER_FAILING_INIT)
  (void)context, (void)mask, (void)name, (void)rank;
  errno = ENOTSUP;
  return ncclInternalError;
#else
  auto* c = new Context();
  c->rank = rank;
  c->name = name != nullptr ? name : "";
  *context = c;
  *mask = static_cast<int>(activationMask());
  std::lock_guard<std::mutex> lock(gMutex);
  ++gInits;
  return ncclSuccess;
#endif
}

ncclResult_t finalize(void* context) {
  auto* c = static_cast<Context*>(context);
  std::string out;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    out = c->lines;
    char head[128];
    snprintf(head, sizeof(head), "finalize v=%d rank=%d pid=%d inits=%d", kVersion, c->rank,
             static_cast<int>(getpid()), gInits);
    out += head;
    for (int t = 0; t < kTypes; ++t) {
      if (c->starts[t] == 0 && c->stops[t] == 0) continue;
      out += " " + std::string(kTypeNames[t]) + "=" + std::to_string(c->starts[t]) + "/" +
             std::to_string(c->stops[t]);
    }
    out += " steps=" + std::to_string(c->steps) + " stepBytes=" + std::to_string(c->stepBytes) +
           " badStops=" + std::to_string(gBadStops) +
           " outsideGroup=" + std::to_string(c->callOutsideGroup) +
           " groupStoppedEarly=" + std::to_string(c->groupStoppedEarly) +
           " orphanSteps=" + std::to_string(c->orphanSteps) +
           " orphanOps=" + std::to_string(c->orphanOps) +
           " unparentedOps=" + std::to_string(c->unparentedOps) +
           " orphanNet=" + std::to_string(c->orphanNet) +
           " netUpdates=" + std::to_string(c->netUpdates) +
           " unknownTypes=" + std::to_string(c->unknownTypes) +
           " orphanApis=" + std::to_string(c->orphanApis) +
           " orphanCalls=" + std::to_string(c->orphanCalls) +
           " apiParented=" + std::to_string(c->apiParented) +
           " badGroupStates=" + std::to_string(c->badGroupStates) + "\n";
    for (Event& e : c->events) gStarted.erase(&e);
  }
  delete c;
  // One write of the whole record, appended: the ranks' processes share the file.
  if (const char* path = getenv("BRAID_TEST_PROFILER_OUT")) {
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
      (void)!write(fd, out.data(), out.size());
      close(fd);
    }
  }
  return ncclSuccess;
}

#if defined(BRAID_TEST_PROFILER_V1)
ncclResult_t init(void** context, int* mask) { return initContext(context, mask, nullptr, -1); }
#elif defined(BRAID_TEST_PROFILER_V4)
ncclResult_t init(void** context, int* mask, const char* name, uint64_t /*hash*/, int /*nodes*/,
                  int /*nranks*/, int rank, ncclDebugLogger_t /*log*/) {
  return initContext(context, mask, name, rank);
}
#else
ncclResult_t init(void** context, uint64_t /*commId*/, int* mask, const char* name, int /*nodes*/,
                  int /*nranks*/, int rank, ncclDebugLogger_t /*log*/) {
  return initContext(context, mask, name, rank);
}
#endif

}  // namespace

extern "C" {
#if defined(BRAID_TEST_PROFILER_V1)
__attribute__((visibility("default"))) extern const ncclProfiler_v1_t ncclProfiler_v1;
const ncclProfiler_v1_t ncclProfiler_v1 = {"braidcount",     init,    startEvent, stopEvent,
                                           recordEventState, finalize};
#elif defined(BRAID_TEST_PROFILER_V4)
__attribute__((visibility("default"))) extern const ncclProfiler_v4_t ncclProfiler_v4;
const ncclProfiler_v4_t ncclProfiler_v4 = {"braidcount",     init,    startEvent, stopEvent,
                                           recordEventState, finalize};
#else
__attribute__((visibility("default"))) extern const ncclProfiler_v6_t ncclProfiler_v6;
const ncclProfiler_v6_t ncclProfiler_v6 = {"braidcount",     init,    startEvent, stopEvent,
                                           recordEventState, finalize};
#endif
}  // extern "C"
