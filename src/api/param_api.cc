// NCCL 2.30's parameter API over braid's Config (config_params.h): a handle is a row of the
// table; a value is what Config::fromEnvironment() reads now, so it is what a communicator made
// now would use. Integer parameters are 64-bit or 32-bit as the table says; the typed getters
// refuse another type, as NCCL's do, and ncclParamGet copies the raw bytes.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/api_util.h"
#include "config.h"
#include "config_params.h"

using braid::api::report;

namespace {

const braid::ConfigParam* paramOf(ncclParamHandle_t h) {
  return reinterpret_cast<const braid::ConfigParam*>(h);
}

const char* typeName(braid::ParamType t) {
  switch (t) {
    case braid::ParamType::kInt32:
      return "a 32-bit integer";
    case braid::ParamType::kInt64:
      return "a 64-bit integer";
    case braid::ParamType::kString:
      return "a string";
  }
  return "?";
}

// Reads an integer parameter into an integer type of `bytes` bytes: refused unless the
// parameter has exactly that width (int8 .. uint64 exist for NCCL's own narrow parameters;
// braid's are 32- and 64-bit).
template <typename T>
ncclResult_t getInteger(ncclParamHandle_t h, T* out, const char* function) {
  if (h == nullptr || out == nullptr) {
    return report(braid::invalidArgument(std::string(function) + ": handle or output is NULL"));
  }
  const braid::ConfigParam& p = *paramOf(h);
  const size_t width = p.type == braid::ParamType::kInt32   ? 4
                       : p.type == braid::ParamType::kInt64 ? 8
                                                            : 0;
  if (width != sizeof(T)) {
    return report(braid::invalidArgument(std::string(function) + ": " + p.name + " is " +
                                         typeName(p.type) + ", not a " +
                                         std::to_string(8 * sizeof(T)) + "-bit integer"));
  }
  *out = static_cast<T>(p.number(braid::Config::fromEnvironment()));
  return ncclSuccess;
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclParamBind, ncclParamHandle_t* out, const char* key) {
  if (out == nullptr || key == nullptr) {
    return report(braid::invalidArgument("ncclParamBind: out or key is NULL"));
  }
  const braid::ConfigParam* p = braid::findConfigParam(key);
  if (p == nullptr) {
    return report(braid::invalidArgument(std::string("ncclParamBind: braid has no parameter ") +
                                         key + " (ncclParamGetAllParameterKeys lists them)"));
  }
  *out = reinterpret_cast<ncclParamHandle_t>(const_cast<braid::ConfigParam*>(p));
  return ncclSuccess;
}

// The typed getters, one per integer type of the API.
#define BRAID_PARAM_GETTER(suffix, type)                                               \
  BRAID_NCCL_API(ncclResult_t, ncclParamGet##suffix, ncclParamHandle_t h, type* out) { \
    return getInteger(h, out, "ncclParamGet" #suffix);                                 \
  }
BRAID_PARAM_GETTER(I8, int8_t)
BRAID_PARAM_GETTER(I16, int16_t)
BRAID_PARAM_GETTER(I32, int32_t)
BRAID_PARAM_GETTER(I64, int64_t)
BRAID_PARAM_GETTER(U8, uint8_t)
BRAID_PARAM_GETTER(U16, uint16_t)
BRAID_PARAM_GETTER(U32, uint32_t)
BRAID_PARAM_GETTER(U64, uint64_t)
#undef BRAID_PARAM_GETTER

BRAID_NCCL_API(ncclResult_t, ncclParamGetStr, ncclParamHandle_t h, const char** out) {
  if (h == nullptr || out == nullptr) {
    return report(braid::invalidArgument("ncclParamGetStr: handle or output is NULL"));
  }
  const braid::ConfigParam& p = *paramOf(h);
  if (p.type != braid::ParamType::kString) {
    return report(braid::invalidArgument(std::string("ncclParamGetStr: ") + p.name + " is " +
                                         typeName(p.type) + ", not a string"));
  }
  static thread_local std::string value;
  value = p.text(braid::Config::fromEnvironment());
  *out = value.c_str();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclParamGet, ncclParamHandle_t h, void* out, int maxLen, int* len) {
  if (h == nullptr || out == nullptr || len == nullptr) {
    return report(braid::invalidArgument("ncclParamGet: handle, output or length is NULL"));
  }
  const braid::ConfigParam& p = *paramOf(h);
  const braid::Config c = braid::Config::fromEnvironment();
  std::vector<unsigned char> bytes;
  if (p.type == braid::ParamType::kString) {
    const std::string text = p.text(c);
    bytes.assign(text.begin(), text.end());
    bytes.push_back(0);
  } else if (p.type == braid::ParamType::kInt32) {
    const int32_t v = static_cast<int32_t>(p.number(c));
    bytes.resize(sizeof v);
    memcpy(bytes.data(), &v, sizeof v);
  } else {
    const int64_t v = p.number(c);
    bytes.resize(sizeof v);
    memcpy(bytes.data(), &v, sizeof v);
  }
  *len = static_cast<int>(bytes.size());
  if (maxLen < *len) {
    return report(braid::invalidArgument("ncclParamGet: " + std::string(p.name) + " needs " +
                                         std::to_string(*len) + " bytes, the buffer has " +
                                         std::to_string(maxLen)));
  }
  memcpy(out, bytes.data(), bytes.size());
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclParamGetParameter, const char* key, const char** value,
               int* valueLen) {
  if (key == nullptr || value == nullptr || valueLen == nullptr) {
    return report(braid::invalidArgument("ncclParamGetParameter: key, value or length is NULL"));
  }
  const braid::ConfigParam* p = braid::findConfigParam(key);
  if (p == nullptr) {
    *value = nullptr;
    *valueLen = 0;
    return report(braid::invalidArgument(std::string("ncclParamGetParameter: braid has no "
                                                     "parameter ") +
                                         key));
  }
  static thread_local std::string text;
  text = braid::configParamText(*p, braid::Config::fromEnvironment());
  *value = text.c_str();
  *valueLen = static_cast<int>(text.size());
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclParamGetAllParameterKeys, const char*** table, int* tableLen) {
  if (table == nullptr || tableLen == nullptr) {
    return report(braid::invalidArgument("ncclParamGetAllParameterKeys: table or length is NULL"));
  }
  static thread_local std::vector<const char*> keys;
  keys.clear();
  for (const braid::ConfigParam& p : braid::configParams()) keys.push_back(p.name);
  *table = keys.data();
  *tableLen = static_cast<int>(keys.size());
  return ncclSuccess;
}

BRAID_NCCL_API(void, ncclParamDumpAll) {
  const braid::Config c = braid::Config::fromEnvironment();
  printf("=== braid parameters ===\n");
  for (const braid::ConfigParam& p : braid::configParams()) {
    printf("%s = %s\n", p.name, braid::configParamText(p, c).c_str());
  }
  fflush(stdout);
}
