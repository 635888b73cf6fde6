// Rounding a size up to a multiple, for the layouts of shared and device memory.
#pragma once

#include <cstddef>

namespace braid {

/// `n` rounded up to a multiple of `a` (a > 0).
inline constexpr size_t alignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace braid
