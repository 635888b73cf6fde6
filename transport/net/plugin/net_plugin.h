// NetPlugin: one network plugin's calls as braid makes them, whatever the plugin's version.
//
// A plugin exports a table of C functions whose signatures changed from version 6 to 12
// (net_plugin_abi.h says how). braid talks to every version through this one class: sizes are
// size_t, a receive is one buffer (braid never groups receives, so any maxRecvs serves), every
// call returns a Status that names the plugin and the call that failed. The version adapters are
// in net_plugin_versions.cc; the loader that finds the table is net_plugin_loader.h.
//
// What braid does not call yet is not here: the device offload calls (getDeviceMr,
// irecvConsumed), virtual devices (makeVDevice), setNetAttr, and the collective network
// (ncclCollNetPlugin_vN), which the loader declines with an INFO line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "braid/status.h"

namespace braid::transport::plugin {

/// One device as getProperties describes it, in the units of the newest version.
struct DeviceProps {
  std::string name;
  std::string pciPath;  ///< empty where the plugin gave none
  uint64_t guid = 0;
  int ptrSupport = 0;  ///< netabi::kPtrHost | kPtrCuda | kPtrDmabuf
  bool regIsGlobal = false;
  bool forceFlush = false;
  int speedMbps = 0;
  int port = 0;
  float latencyUs = 0;
  int maxComms = 0;
  int maxRecvs = 1;
  int deviceType = 0;      ///< netabi::ncclNetDeviceType; braid runs NCCL_NET_DEVICE_HOST only
  size_t maxP2pBytes = 0;  ///< the largest isend/irecv the plugin takes
  std::string describe() const;
};

class NetPlugin {
 public:
  virtual ~NetPlugin() = default;

  /// The network's `name` field (what NCCL_NET selects), the version of its table, and the
  /// library it came from.
  const std::string& name() const { return name_; }
  int version() const { return version_; }
  const std::string& path() const { return path_; }

  /// Initializes the plugin (v11 and later: a context braid passes back, finalized by
  /// finalize()).
  virtual Status init() = 0;
  virtual void finalize() = 0;
  virtual Result<int> devices() = 0;
  virtual Result<DeviceProps> properties(int dev) = 0;

  /// A receiving object on `dev` and the handle (netabi::kHandleMaxSize bytes) a sender connects
  /// with.
  virtual Status listen(int dev, void* handle, void** listenComm) = 0;
  /// Never block: *sendComm / *recvComm stay null until the connection is made, and the caller
  /// calls again.
  virtual Status connect(int dev, void* handle, void** sendComm) = 0;
  virtual Status accept(void* listenComm, void** recvComm) = 0;
  /// `type` is netabi::kPtrHost, or kPtrCuda for device memory (GPUDirect RDMA by pointer).
  virtual Status regMr(void* comm, void* data, size_t size, int type, void** mhandle) = 0;
  /// Device memory the plugin reaches through the dmabuf `fd` (`data` is `offset` bytes into
  /// it); an error naming the call where the plugin's table has none.
  virtual Status regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                             void** mhandle) = 0;
  virtual Status deregMr(void* comm, void* mhandle) = 0;
  /// *request stays null when the plugin cannot take the transfer now; the caller retries.
  /// `phandle` is the transfer's profiler handle, given to v10 and later plugins
  /// (profile::NetEventParent; null: no profiler listens).
  virtual Status isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                       void* phandle, void** request) = 0;
  virtual Status irecv(void* recvComm, void* data, size_t size, int tag, void* mhandle,
                       void* phandle, void** request) = 0;
  /// Makes `size` bytes received into device memory at `data` visible to the GPU (one buffer);
  /// *request is null where nothing needs flushing, else tested to completion with test().
  virtual Status iflush(void* recvComm, void* data, size_t size, void* mhandle, void** request) = 0;
  /// *size: the bytes sent or received, once *done.
  virtual Status test(void* request, bool* done, size_t* size) = 0;
  virtual Status closeSend(void* sendComm) = 0;
  virtual Status closeRecv(void* recvComm) = 0;
  virtual Status closeListen(void* listenComm) = 0;

 protected:
  NetPlugin(std::string name, int version, std::string path)
      : name_(std::move(name)), version_(version), path_(std::move(path)) {}
  /// A failed call's Status: the plugin's result as braid's code, and which call of which plugin.
  Status failed(int result, const char* call) const;

 private:
  std::string name_;
  int version_;
  std::string path_;
};

/// The plugin whose `ncclNetPlugin_v<version>` table is at `table` (in the library at `path`).
/// Null for a version braid does not know.
std::unique_ptr<NetPlugin> adoptNetTable(int version, const void* table, const std::string& path);

}  // namespace braid::transport::plugin
