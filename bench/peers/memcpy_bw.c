/*
 * memcpy-bw: this machine's memory copy rate, the physical limit the host collectives are
 * compared with (bench/compare-mpi.sh). T threads each copy their share of an S-byte buffer into
 * another with glibc's memcpy, R times over; the rate counts every byte read and every byte
 * written (2 S R bytes), as the zero-copy bound of docs/benchmarks.md does. Pages are touched
 * before the clock starts. Prints one line: "memcpy <T> threads <S> bytes: <GB/s> GB/s".
 *
 * usage: memcpy-bw [threads, default 2] [bytes, default 256 MiB] [repeats, default 8]
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct Share {
  char* dst;
  const char* src;
  size_t bytes;
  int repeats;
};

static void* copyShare(void* arg) {
  const struct Share* s = (const struct Share*)arg;
  for (int r = 0; r < s->repeats; ++r) memcpy(s->dst, s->src, s->bytes);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const size_t bytes = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : ((size_t)256 << 20);
  const int repeats = argc > 3 ? atoi(argv[3]) : 8;
  if (threads < 1 || threads > 256 || bytes < (size_t)threads * 4096 || repeats < 1) {
    fprintf(stderr, "usage: memcpy-bw [threads 1..256] [bytes >= 4 KiB a thread] [repeats]\n");
    return 2;
  }
  char* src = malloc(bytes);
  char* dst = malloc(bytes);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  struct Share* shares = calloc((size_t)threads, sizeof *shares);
  if (src == NULL || dst == NULL || ids == NULL || shares == NULL) {
    fprintf(stderr, "memcpy-bw: out of memory\n");
    return 1;
  }
  memset(src, 1, bytes);
  memset(dst, 2, bytes);
  const size_t share = bytes / (size_t)threads;
  for (int t = 0; t < threads; ++t) {
    shares[t].dst = dst + (size_t)t * share;
    shares[t].src = src + (size_t)t * share;
    shares[t].bytes = t == threads - 1 ? bytes - (size_t)t * share : share;
    shares[t].repeats = repeats;
  }
  const double start = now();
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, copyShare, &shares[t]);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  const double seconds = now() - start;
  /* One byte of the result, so that no copy can be optimized away. */
  volatile char sink = dst[bytes / 2];
  (void)sink;
  printf("memcpy %d threads %zu bytes: %.2f GB/s\n", threads, bytes,
         2.0 * (double)bytes * repeats / seconds / 1e9);
  free(src);
  free(dst);
  free(ids);
  free(shares);
  return 0;
}
