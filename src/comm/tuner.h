// The communicator's tuner plugin (src/tune/plugin): loaded once per process as NCCL loads it
// (NCCL_TUNER_PLUGIN, else the network plugin's library), and a context of this communicator's,
// handed to the selector, which asks it about every call.
#pragma once

#include <memory>

#include "comm/members.h"
#include "comm/network.h"
#include "config.h"
#include "tune/cost_model.h"
#include "tune/plugin/tuner_session.h"

namespace braid::comm {

/// The tuner session of a communicator whose members, network and model are settled; null when
/// no tuner loads or its init fails (said at INFO): the selector then chooses alone.
std::unique_ptr<tune::TunerSession> openTuner(const Config& config, const Members& members,
                                              const Network& network, const tune::Model& model);

}  // namespace braid::comm
