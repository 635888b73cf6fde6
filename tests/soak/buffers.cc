// A v-collective call's buffers and their check (buffers.h).
#include "soak/buffers.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

namespace braid::soak {

using matrix::Region;

Buffers::~Buffers() {
  if (device_ == nullptr) return;
  for (void* p : deviceRegions_) device_->release(p);
  device_->release(deviceScalar_);
}

int Buffers::add(size_t elems, matrix::Rng& rng) {
  Region& g = regions_.emplace_back();
  g.bytes.resize(elems * elem_ + 2 * Region::kGuard);
  matrix::randomBytes(rng, g.bytes.data(), g.bytes.size());
  return static_cast<int>(regions_.size()) - 1;
}

unsigned char* Buffers::at(int region, size_t elem) {
  return regions_[region].payload() + elem * elem_;
}

unsigned char* Buffers::expectAt(int region, size_t elem) {
  return regions_[region].expected.data() + Region::kGuard + elem * elem_;
}

void Buffers::freeze() {
  for (Region& g : regions_) g.expected = g.bytes;
}

void Buffers::expectReduced(int region, size_t offset, size_t count, size_t first) {
  reduced_.push_back({region, offset, count, first});
}

ncclResult_t Buffers::toDevice(const braidDeviceApi* device, cudaStream_t stream) {
  device_ = device;
  stream_ = stream;
  ncclResult_t r = device->alloc(&deviceScalar_, sizeof(uint64_t));
  for (const Region& g : regions_) {
    if (r != ncclSuccess) break;
    void*& p = deviceRegions_.emplace_back(nullptr);
    r = device->alloc(&p, g.bytes.size());
    if (r == ncclSuccess) r = device->copy(p, g.bytes.data(), g.bytes.size(), stream);
  }
  return r == ncclSuccess ? device->streamSynchronize(stream) : r;
}

ncclResult_t Buffers::fromDevice() {
  ncclResult_t r = device_->streamSynchronize(stream_);
  for (size_t g = 0; g < regions_.size() && r == ncclSuccess; ++g) {
    r = device_->copy(regions_[g].bytes.data(), deviceRegions_[g], regions_[g].bytes.size(),
                      stream_);
  }
  return r == ncclSuccess ? device_->streamSynchronize(stream_) : r;
}

void* Buffers::callAt(int region, size_t elem) {
  if (deviceRegions_.empty()) return at(region, elem);
  return static_cast<unsigned char*>(deviceRegions_[region]) + Region::kGuard + elem * elem_;
}

void Buffers::corrupt(uint64_t where) {
  std::vector<unsigned char>& bytes = regions_[where % regions_.size()].bytes;
  bytes[(where >> 8) % bytes.size()] ^= 0xff;
}

size_t Buffers::largest() const {
  size_t most = 0;
  for (const Region& g : regions_) most = std::max(most, g.bytes.size() - 2 * Region::kGuard);
  return most;
}

Verdict Buffers::check(const matrix::TypeInfo& type, const Judge& judge) const {
  constexpr size_t kShown = 3;
  size_t wrong = 0;
  std::string shown;
  auto note = [&](const std::string& what) {
    if (wrong++ < kShown) shown += "\n    " + what;
  };
  for (size_t g = 0; g < regions_.size(); ++g) {
    const Region& region = regions_[g];
    // The byte ranges that hold reduced elements, which the byte comparison skips.
    std::vector<std::pair<size_t, size_t>> holes;
    for (const matrix::ReducedRange& rr : reduced_) {
      if (rr.region != static_cast<int>(g)) continue;
      const size_t begin = Region::kGuard + rr.offset * elem_;
      holes.emplace_back(begin, begin + rr.count * elem_);
    }
    holes.emplace_back(region.bytes.size(), region.bytes.size());
    std::sort(holes.begin(), holes.end());
    const size_t payloadBytes = region.bytes.size() - 2 * Region::kGuard;
    size_t from = 0;
    for (const auto& [holeBegin, holeEnd] : holes) {
      const size_t n = holeBegin - from;
      if (memcmp(region.bytes.data() + from, region.expected.data() + from, n) != 0) {
        for (size_t b = from; b < holeBegin; ++b) {
          if (region.bytes[b] == region.expected[b]) continue;
          const long at = static_cast<long>(b) - static_cast<long>(Region::kGuard);
          const char* where = at < 0                                    ? "guard before"
                              : static_cast<size_t>(at) >= payloadBytes ? "guard after"
                                                                        : "payload";
          char text[160];
          snprintf(text, sizeof text,
                   "region %zu %s, byte %ld (element %ld): got 0x%02x, expected 0x%02x", g, where,
                   at, at >= 0 ? at / static_cast<long>(elem_) : -1L, region.bytes[b],
                   region.expected[b]);
          note(text);
        }
      }
      from = std::max(from, holeEnd);
    }
  }
  for (const matrix::ReducedRange& rr : reduced_) {
    const unsigned char* out =
        regions_[rr.region].bytes.data() + Region::kGuard + rr.offset * elem_;
    std::string why;
    for (size_t i = 0; i < rr.count; ++i) {
      if (!judge(rr.first + i, type.load(out + i * elem_), &why)) note(why);
    }
  }
  Verdict v;
  v.right = wrong == 0;
  if (!v.right) v.detail = std::to_string(wrong) + " wrong byte(s) or element(s)" + shown;
  return v;
}

}  // namespace braid::soak
