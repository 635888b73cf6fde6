// SIGUSR1 dumps every flight recorder of the process (BRAID_FLIGHT_RECORDER=<dir> asks for it):
// how to ask a job that hangs what each rank waits for, without stopping it.
//
// A signal handler may do almost nothing, so it writes one byte to a pipe; a thread of braid's
// reads the pipe and dumps the recorders registered here, each with the words of its losses.
// The handler is installed when the first recorder registers; a handler the program had for
// SIGUSR1 before is called after braid's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "flight/flight_recorder.h"

namespace braid::flight {

/// Dumps `recorder` on every SIGUSR1 until forgotten; `lost` words the communicator's losses.
void dumpOnSignal(const FlightRecorder* recorder, std::function<std::vector<std::string>()> lost);
/// Stops dumping `recorder`; returns once no dump of it runs.
void forget(const FlightRecorder* recorder);

}  // namespace braid::flight
