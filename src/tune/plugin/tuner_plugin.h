// TunerPlugin: one tuner plugin's calls as braid makes them, whatever the plugin's version.
//
// A tuner exports a table whose init and getCollInfo changed from version 2 to 6 (tuner_abi.h
// says how). braid talks to every version through this one class, in the newest version's terms:
// init takes the communicator's id, ranks, nodes, NVLink domains and constants; getCollInfo
// takes the cost table and may rewrite it. The adapters (tuner_versions.cc) do what NCCL's do
// for the old ones: a v2 plugin's answer (an algorithm and a protocol) becomes a cost of 0 in
// the table, so that the cheapest entry is the one it named.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "braid/status.h"
#include "tune/plugin/tuner_abi.h"

namespace braid::tune {

/// The cost table of one call in NCCL's shape: microseconds per [NCCL algorithm][NCCL protocol]
/// (tunerabi::NCCL_ALGO_*, NCCL_PROTO_*), NCCL_ALGO_PROTO_IGNORE where it may not run.
struct CostTable {
  float us[tunerabi::NCCL_NUM_ALGORITHMS][tunerabi::NCCL_NUM_PROTOCOLS];
};

/// What a tuner's init is told about the communicator.
struct TunerInit {
  uint64_t commId = 0;  ///< the same on every rank of the communicator
  size_t nranks = 1;
  size_t nnodes = 1;
  tunerabi::ncclNvlDomainInfo_v5_t nvlDomains{};
  tunerabi::ncclTunerConstants_v5_t constants{};
};

class TunerPlugin {
 public:
  virtual ~TunerPlugin() = default;

  /// The tuner's `name` field, the version of its table and the library it came from.
  const std::string& name() const { return name_; }
  int version() const { return version_; }
  const std::string& path() const { return path_; }
  /// "NAME (vN, PATH)", for messages.
  std::string describe() const {
    return name_ + " (v" + std::to_string(version_) + ", " + path_ + ")";
  }

  /// A communicator's context, made by the plugin's init (which may change `init.constants`).
  virtual Result<void*> init(TunerInit& init) = 0;
  /// The plugin's getCollInfo for one call: it may rewrite `table` and set `*nChannels`.
  virtual Status getCollInfo(void* context, tunerabi::ncclFunc_t collective, size_t bytes,
                             int numPipeOps, CostTable& table, bool regBuff, int* nChannels) = 0;
  /// Ends the context (finalize; destroy before v5).
  virtual Status finalize(void* context) = 0;
  /// Whether the plugin answers getChunkSize (v6, where its table's entry is not null).
  virtual bool offersChunkSize() const { return false; }
  /// The plugin's getChunkSize for one call: it may change `*chunkSize`, the bytes of one chunk
  /// braid would move, for the algorithm and protocol (NCCL's indices) on `nChannels` channels.
  virtual Status getChunkSize(void* context, tunerabi::ncclFunc_t collective, size_t bytes,
                              int algorithm, int protocol, int nChannels, size_t* chunkSize) {
    (void)context, (void)collective, (void)bytes, (void)algorithm, (void)protocol;
    (void)nChannels, (void)chunkSize;
    return invalidUsage("TUNER plugin " + describe() + " has no getChunkSize");
  }

 protected:
  TunerPlugin(std::string name, int version, std::string path)
      : name_(std::move(name)), version_(version), path_(std::move(path)) {}

 private:
  std::string name_;
  int version_;
  std::string path_;
};

/// The adapter for `table`, a plugin's ncclTunerPlugin_v`version` (2 to 6) from `path`.
std::unique_ptr<TunerPlugin> adoptTunerTable(int version, const void* table,
                                             const std::string& path);

}  // namespace braid::tune
