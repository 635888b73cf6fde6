/*
 * allreduce.c: four ranks in one process sum a vector of floats with ncclAllReduce, using nothing
 * but nccl.h. It runs on host memory (BRAID_HOST_COMM=1, set below unless the environment says
 * otherwise), so it needs no GPU. Prints OK and exits 0 when every rank holds the right sums.
 */
#define _POSIX_C_SOURCE 200112L /* setenv */

#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

enum { kRanks = 4, kCount = 1000 };

static int check(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return 1;
  fprintf(stderr, "%s: %s (%s)\n", what, ncclGetErrorString(r), ncclGetLastError(NULL));
  return 0;
}

int main(void) {
  /* Host buffers need host communicators, even where a GPU is present. */
  setenv("BRAID_HOST_COMM", "1", 0);

  static float data[kRanks][kCount];
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) data[r][i] = (float)(r + 1) * (float)i;
  }

  ncclComm_t comms[kRanks];
  if (!check(ncclCommInitAll(comms, kRanks, NULL), "ncclCommInitAll")) return 1;

  /* One thread drives all four ranks, so their calls form a group: each call only queues, and
   * ncclGroupEnd runs them together (alone, a rank's call would wait for the others). */
  int ok = check(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; ok && r < kRanks; ++r) {
    ok = check(ncclAllReduce(data[r], data[r], kCount, ncclFloat, ncclSum, comms[r], NULL),
               "ncclAllReduce");
  }
  ok = check(ncclGroupEnd(), "ncclGroupEnd") && ok;

  /* Sum over ranks of (r + 1) * i = 10 * i: small integers, exact in float. */
  for (int r = 0; ok && r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) {
      if (data[r][i] != 10.0f * (float)i) {
        fprintf(stderr, "rank %d element %d: %g, want %g\n", r, i, data[r][i], 10.0 * i);
        ok = 0;
        break;
      }
    }
  }
  for (int r = 0; r < kRanks; ++r) ok = check(ncclCommDestroy(comms[r]), "ncclCommDestroy") && ok;
  printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
