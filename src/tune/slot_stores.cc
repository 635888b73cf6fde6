#include "tune/slot_stores.h"

namespace braid::tune {

int SlotStores::classOf(size_t bytes) {
  int log2 = 0;
  while (log2 < 63 && (size_t{1} << (log2 + 1)) <= bytes) ++log2;
  const int c = log2 - 18;  // kMinBytes is 2^18
  return c < 0 ? 0 : (c >= kClasses ? kClasses - 1 : c);
}

bool SlotStores::streamNext(size_t bytes, bool startStreamed) {
  if (bytes < kMinBytes) return startStreamed;
  SizeClass& c = classes_[classOf(bytes)];
  const uint32_t n = c.calls++;
  const double plain = c.nsPerByte[0];
  const double streamed = c.nsPerByte[1];
  // Each mode is measured once before either is trusted: the starting choice first.
  if (plain == 0 && streamed == 0) return startStreamed;
  if (plain == 0 || streamed == 0) return streamed == 0;  // the one not yet measured
  const bool winner = streamed < plain;
  return n % kExploreEvery == kExploreEvery - 1 ? !winner : winner;
}

void SlotStores::record(size_t bytes, bool streamed, double seconds) {
  if (bytes < kMinBytes || seconds <= 0) return;
  SizeClass& c = classes_[classOf(bytes)];
  double& average = c.nsPerByte[streamed ? 1 : 0];
  const double other = c.nsPerByte[streamed ? 0 : 1];
  double sample = seconds * 1e9 / static_cast<double>(bytes);
  // A first time, or the loser's (an exploration: its average is as old as the last one), is
  // taken as it is: the freshest word on that mode.
  if (average == 0 || (other > 0 && average > other)) {
    average = sample;
    return;
  }
  // The winner's: half the weight on the newest, so that a mode the machine has just turned
  // against loses within a few calls; a call over 4x the average counts as 4x, so that one
  // descheduled call (a 25x outlier was seen) does not hand the calls over on its own.
  if (sample > 4 * average) sample = 4 * average;
  average = 0.5 * average + 0.5 * sample;
}

double SlotStores::nsPerByte(size_t bytes, bool streamed) const {
  if (bytes < kMinBytes) return 0;
  return classes_[classOf(bytes)].nsPerByte[streamed ? 1 : 0];
}

}  // namespace braid::tune
