// A rank's buffers for one v-collective call, laid out as the collective matrix lays out its
// own (matrix::Region: a payload between two guard margins, random bytes wherever the call has
// no business writing) with what each byte must hold afterwards. Elements that hold reduced
// results are left out of the byte comparison and judged one by one against a reference.
// On a GPU communicator the regions are copied to device memory before the call and back after
// its stream has finished, so the check always reads host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/matrix_cases.h"
#include "braid_ext.h"
#include "soak/call_run.h"

namespace braid::soak {

class Buffers {
 public:
  explicit Buffers(size_t elemBytes) : elem_(elemBytes) {}
  ~Buffers();
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  /// Adds a region of `elems` elements, filled (guards too) with bytes from `rng`; returns its
  /// index.
  int add(size_t elems, matrix::Rng& rng);
  /// Element `elem` of region `region` in host memory, and what it must hold after the call.
  unsigned char* at(int region, size_t elem);
  unsigned char* expectAt(int region, size_t elem);
  /// Takes what the regions hold now as what they must hold after the call: call it once the
  /// inputs are in place, then write the outputs the call must produce with expectAt.
  void freeze();
  /// Elements [offset, offset + count) of `region` hold reduced elements first, first + 1, ...
  void expectReduced(int region, size_t offset, size_t count, size_t first);

  /// Copies the regions to memory of the current device (and makes room for a premulsum
  /// scalar there), for calls on `stream`.
  ncclResult_t toDevice(const braidDeviceApi* device, cudaStream_t stream);
  /// Waits for the stream, copies the regions back and frees the device copies.
  ncclResult_t fromDevice();
  /// What the call passes for element `elem` of `region`: the device copy after toDevice.
  void* callAt(int region, size_t elem);
  /// The device's scalar slot (after toDevice), else nullptr.
  void* deviceScalar() const { return deviceScalar_; }

  /// Flips one byte (guards included) of a region, both chosen by `where`.
  void corrupt(uint64_t where);

  /// The largest payload in bytes.
  size_t largest() const;

  /// Judges reduced element `index` holding bits `got`: true when right; else fills `why`.
  using Judge = std::function<bool(size_t index, uint64_t got, std::string* why)>;
  /// Compares every byte outside the reduced ranges with what it must hold and judges every
  /// reduced element; the detail names the first few that are wrong and how many there are.
  Verdict check(const matrix::TypeInfo& type, const Judge& judge) const;

 private:
  size_t elem_;
  std::vector<matrix::Region> regions_;
  std::vector<matrix::ReducedRange> reduced_;
  const braidDeviceApi* device_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> deviceRegions_;
  void* deviceScalar_ = nullptr;
};

}  // namespace braid::soak
