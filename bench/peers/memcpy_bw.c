/*
 * memcpy-bw: this machine's memory copy rate, the yardstick the host collectives are compared
 * with (bench/compare-mpi.sh). T threads each copy their share of an S-byte buffer into another,
 * R times over; the rate counts every byte read and every byte written (2 S R bytes), as the
 * copy-loop yardstick of docs/benchmarks.md does. Pages are touched before the clock starts.
 *
 * A yardstick, not a limit: each thread runs one read and one write stream, and loops with more
 * streams a core have moved more bytes per second on the same machine (docs/benchmarks.md).
 *
 * Two copies are timed, and the faster is the machine's rate: glibc's memcpy, and (on x86-64) a
 * loop of 16-byte loads and non-temporal stores. glibc switches to `rep movsb` for large copies,
 * which on some CPUs (AMD Zen among them) runs well below what the memory allows; a yardstick
 * taken from it alone would flatter whatever it is compared with.
 *
 * Prints one line: "copy <T> threads <S> bytes: memcpy <GB/s>, stream loop <GB/s>, best <GB/s>
 * GB/s".
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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* 64 bytes a turn with non-temporal stores, which do not read the destination's lines first;
 * the tail (shares are 4 KiB multiples but for the last) goes by memcpy. */
static void* streamShare(void* arg) {
  const struct Share* s = (const struct Share*)arg;
#if defined(__SSE2__)
  const size_t whole = s->bytes / 64 * 64;
  for (int r = 0; r < s->repeats; ++r) {
    for (size_t i = 0; i < whole; i += 64) {
      const __m128i* from = (const __m128i*)(s->src + i);
      __m128i* to = (__m128i*)(s->dst + i);
      const __m128i a = _mm_load_si128(from), b = _mm_load_si128(from + 1);
      const __m128i c = _mm_load_si128(from + 2), d = _mm_load_si128(from + 3);
      _mm_stream_si128(to, a);
      _mm_stream_si128(to + 1, b);
      _mm_stream_si128(to + 2, c);
      _mm_stream_si128(to + 3, d);
    }
    memcpy(s->dst + whole, s->src + whole, s->bytes - whole);
  }
  _mm_sfence();
#else
  copyShare(arg);
#endif
  return NULL;
}

/* GB/s of copying every share with `copy` on its own thread. */
static double timeCopies(void* (*copy)(void*), struct Share* shares, pthread_t* ids, int threads,
                         size_t bytes, int repeats);

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
  /* 64-byte aligned, for the stream loop's aligned loads and stores. */
  char* src = aligned_alloc(64, (bytes + 63) / 64 * 64);
  char* dst = aligned_alloc(64, (bytes + 63) / 64 * 64);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  struct Share* shares = calloc((size_t)threads, sizeof *shares);
  if (src == NULL || dst == NULL || ids == NULL || shares == NULL) {
    fprintf(stderr, "memcpy-bw: out of memory\n");
    return 1;
  }
  memset(src, 1, bytes);
  memset(dst, 2, bytes);
  const size_t share = bytes / (size_t)threads / 4096 * 4096;
  for (int t = 0; t < threads; ++t) {
    shares[t].dst = dst + (size_t)t * share;
    shares[t].src = src + (size_t)t * share;
    shares[t].bytes = t == threads - 1 ? bytes - (size_t)t * share : share;
    shares[t].repeats = repeats;
  }
  const double glibc = timeCopies(copyShare, shares, ids, threads, bytes, repeats);
  const double stream = timeCopies(streamShare, shares, ids, threads, bytes, repeats);
  /* One byte of the result, so that no copy can be optimized away. */
  volatile char sink = dst[bytes / 2];
  (void)sink;
  printf("copy %d threads %zu bytes: memcpy %.2f, stream loop %.2f, best %.2f GB/s\n", threads,
         bytes, glibc, stream, glibc > stream ? glibc : stream);
  free(src);
  free(dst);
  free(ids);
  free(shares);
  return 0;
}

static double timeCopies(void* (*copy)(void*), struct Share* shares, pthread_t* ids, int threads,
                         size_t bytes, int repeats) {
  const double start = now();
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, copy, &shares[t]);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  const double seconds = now() - start;
  return 2.0 * (double)bytes * repeats / seconds / 1e9;
}
