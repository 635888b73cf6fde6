// The adapters from each version's table (tuner_abi.h) to TunerPlugin (tuner_plugin.h): one
// template, the versions' differences as `if constexpr` on the version number, as NCCL's
// tuner_v2.cc .. tuner_v6.cc adapt the old tables to the newest.
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "base/plugin_log.h"
#include "tune/plugin/tuner_plugin.h"

namespace braid::tune {
namespace {

using namespace braid::tunerabi;  // NOLINT(google-build-using-namespace): the ABI's names

// A tuner's log lines go to braid's log, at the level the plugin asked, marked as its own.
void tunerLog(ncclDebugLogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
              const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  plugins::writePluginLog("TUNER", level, fmt, args);
  va_end(args);
}

// Version V's table: the V-th of these.
using Tables = std::tuple<void, void, ncclTuner_v2_t, ncclTuner_v3_t, ncclTuner_v4_t,
                          ncclTuner_v5_t, ncclTuner_v6_t>;
template <int V>
struct TableOf {
  using type = std::tuple_element_t<V, Tables>;
};

// What NCCL's v2 adapter tells the plugin: whether NVLS or CollNet rows are in the table.
bool rowsPresent(const CostTable& t, int a, int b = -1) {
  return t.us[a][NCCL_PROTO_SIMPLE] != NCCL_ALGO_PROTO_IGNORE ||
         (b >= 0 && t.us[b][NCCL_PROTO_SIMPLE] != NCCL_ALGO_PROTO_IGNORE);
}

template <int V>
class VersionedTuner : public TunerPlugin {
 public:
  using Table = typename TableOf<V>::type;
  VersionedTuner(const Table* table, const std::string& path)
      : TunerPlugin(table->name != nullptr ? table->name : "unnamed", V, path), t_(table) {}

  Result<void*> init(TunerInit& in) override {
    void* context = nullptr;
    int result = ncclSuccess;
    if constexpr (V >= 5) {
      result = t_->init(&context, in.commId, in.nranks, in.nnodes, tunerLog, &in.nvlDomains,
                        &in.constants);
    } else {
      result = t_->init(in.nranks, in.nnodes, tunerLog, &context);
    }
    if (result != ncclSuccess) return failed(result, "init");
    return context;
  }

  Status getCollInfo(void* context, ncclFunc_t collective, size_t bytes, int numPipeOps,
                     CostTable& table, bool regBuff, int* nChannels) override {
    // NCCL hands the float[][] over as a float**: the plugin casts it back.
    float** cells = reinterpret_cast<float**>(table.us);
    int result = ncclSuccess;
    if constexpr (V == 2) {
      int algorithm = NCCL_ALGO_UNDEF;
      int protocol = NCCL_PROTO_UNDEF;
      const int nvls = rowsPresent(table, NCCL_ALGO_NVLS, NCCL_ALGO_NVLS_TREE) ? 1 : 0;
      const int collNet = rowsPresent(table, NCCL_ALGO_COLLNET_CHAIN) ? 1 : 0;
      result = t_->getCollInfo(context, collective, bytes, collNet, nvls, numPipeOps, &algorithm,
                               &protocol, nChannels);
      // The named entry costs nothing now, so the cheapest is it; an ignored one stays so.
      if (result == ncclSuccess && algorithm >= 0 && algorithm < NCCL_NUM_ALGORITHMS &&
          protocol >= 0 && protocol < NCCL_NUM_PROTOCOLS &&
          table.us[algorithm][protocol] != NCCL_ALGO_PROTO_IGNORE) {
        table.us[algorithm][protocol] = 0.0f;
      }
    } else if constexpr (V == 3) {
      result = t_->getCollInfo(context, collective, bytes, numPipeOps, cells, NCCL_NUM_ALGORITHMS,
                               NCCL_NUM_PROTOCOLS, nChannels);
    } else {
      result = t_->getCollInfo(context, collective, bytes, numPipeOps, cells, NCCL_NUM_ALGORITHMS,
                               NCCL_NUM_PROTOCOLS, regBuff ? 1 : 0, nChannels);
    }
    return failed(result, "getCollInfo");
  }

  Status finalize(void* context) override {
    if constexpr (V >= 5) {
      return failed(t_->finalize(context), "finalize");
    } else {
      return failed(t_->destroy(context), "destroy");
    }
  }

  bool offersChunkSize() const override {
    if constexpr (V >= 6) {
      return t_->getChunkSize != nullptr;
    } else {
      return false;
    }
  }

  Status getChunkSize(void* context, ncclFunc_t collective, size_t bytes, int algorithm,
                      int protocol, int nChannels, size_t* chunkSize) override {
    if constexpr (V >= 6) {
      if (t_->getChunkSize != nullptr) {
        return failed(
            t_->getChunkSize(context, collective, bytes, algorithm, protocol, nChannels, chunkSize),
            "getChunkSize");
      }
    }
    return TunerPlugin::getChunkSize(context, collective, bytes, algorithm, protocol, nChannels,
                                     chunkSize);
  }

 private:
  Status failed(int result, const char* call) const {
    if (result == ncclSuccess) return Status::success();
    const bool known = result > 0 && result <= static_cast<int>(ErrorCode::kRemoteError);
    return Status(known ? static_cast<ErrorCode>(result) : ErrorCode::kInternalError,
                  "TUNER plugin " + describe() + ": " + call + " failed with result " +
                      std::to_string(result));
  }

  const Table* t_;
};

}  // namespace

std::unique_ptr<TunerPlugin> adoptTunerTable(int version, const void* table,
                                             const std::string& path) {
  switch (version) {
    case 2:
      return std::make_unique<VersionedTuner<2>>(static_cast<const ncclTuner_v2_t*>(table), path);
    case 3:
      return std::make_unique<VersionedTuner<3>>(static_cast<const ncclTuner_v3_t*>(table), path);
    case 4:
      return std::make_unique<VersionedTuner<4>>(static_cast<const ncclTuner_v4_t*>(table), path);
    case 5:
      return std::make_unique<VersionedTuner<5>>(static_cast<const ncclTuner_v5_t*>(table), path);
    case 6:
      return std::make_unique<VersionedTuner<6>>(static_cast<const ncclTuner_v6_t*>(table), path);
    default:
      return nullptr;
  }
}

}  // namespace braid::tune
