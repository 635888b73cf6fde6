#include "tune/zero_copy_crossover.h"

#include <algorithm>

namespace braid::tune {

std::optional<size_t> zeroCopyCrossover(std::vector<ZeroCopyPoint> points) {
  std::sort(points.begin(), points.end(),
            [](const ZeroCopyPoint& a, const ZeroCopyPoint& b) { return a.bytes < b.bytes; });
  // Walk down from the largest size while zero-copy keeps up; the last size
  // reached is the crossover.
  std::optional<size_t> from;
  for (auto p = points.rbegin(); p != points.rend() && p->zeroCopyUs <= p->fifoUs; ++p) {
    from = p->bytes;
  }
  return from;
}

double medianOf(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

}  // namespace braid::tune
