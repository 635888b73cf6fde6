// A program built against NVIDIA's own nccl.h (and CUDA's headers), not braid's, and linked with
// braid's libnccl.so.2, as an existing NCCL program swapped onto braid would be: one thread makes
// four ranks, splits them into evens and odds in a group, all-reduces on each half, finalizes and
// destroys everything. Run with BRAID_HOST_COMM=1 (host buffers, any machine). Prints OK and exits
// 0 when every result is right.
#include <nccl.h>

#if defined(BRAID_NCCL_EXPORT)
#error "this program must see NVIDIA's nccl.h, and it found braid's"
#endif

#include <cstdio>
#include <vector>

namespace {

bool check(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return true;
  fprintf(stderr, "%s: %s (%s)\n", what, ncclGetErrorString(r), ncclGetLastError(nullptr));
  return false;
}

}  // namespace

int main() {
  constexpr int kRanks = 4;
  std::vector<ncclComm_t> world(kRanks, nullptr), halves(kRanks, nullptr);
  if (!check(ncclCommInitAll(world.data(), kRanks, nullptr), "ncclCommInitAll")) return 1;
  if (!check(ncclGroupStart(), "ncclGroupStart")) return 1;
  for (int r = 0; r < kRanks; ++r) {
    if (!check(ncclCommSplit(world[r], r % 2, -r, &halves[r], nullptr), "ncclCommSplit")) return 1;
  }
  if (!check(ncclGroupEnd(), "ncclGroupEnd (split)")) return 1;
  std::vector<int> values = {1, 2, 4, 8};
  if (!check(ncclGroupStart(), "ncclGroupStart")) return 1;
  for (int r = 0; r < kRanks; ++r) {
    if (!check(ncclAllReduce(&values[r], &values[r], 1, ncclInt32, ncclSum, halves[r], nullptr),
               "ncclAllReduce")) {
      return 1;
    }
  }
  if (!check(ncclGroupEnd(), "ncclGroupEnd (all_reduce)")) return 1;
  bool ok = true;
  for (int r = 0; r < kRanks; ++r) {
    int rank = -1, count = -1;
    ok = ok && check(ncclCommUserRank(halves[r], &rank), "ncclCommUserRank") &&
         check(ncclCommCount(halves[r], &count), "ncclCommCount");
    const int want = r % 2 == 0 ? 1 + 4 : 2 + 8;
    const int wantRank = r < 2 ? 1 : 0;  // keys -r: the higher parent rank comes first
    if (values[r] != want || count != 2 || rank != wantRank) {
      fprintf(stderr, "rank %d: sum %d (want %d), rank %d of %d (want %d of 2)\n", r, values[r],
              want, rank, count, wantRank);
      ok = false;
    }
  }
  if (!check(ncclGroupStart(), "ncclGroupStart")) return 1;
  for (int r = 0; r < kRanks; ++r) {
    ok = ok && check(ncclCommFinalize(halves[r]), "ncclCommFinalize");
    ok = ok && check(ncclCommDestroy(halves[r]), "ncclCommDestroy");
    ok = ok && check(ncclCommDestroy(world[r]), "ncclCommDestroy");
  }
  ok = check(ncclGroupEnd(), "ncclGroupEnd (finalize)") && ok;
  printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
