/*
 * mpi_allreduce_perf: the OpenMPI peer of braid-perf all_reduce.
 *
 * Times MPI_Allreduce exactly as braid-perf times ncclAllReduce (warm-up
 * iterations, then the mean of -n timed iterations, averaged over ranks) and
 * prints the same nccl-tests columns, so bench/compare-mpi.sh can put both
 * side by side. Data are small integers so the sum is exact and is checked.
 *
 * usage: mpirun -np N mpi_allreduce_perf [-b bytes] [-e bytes] [-f factor] [-n iters] [-w warmup]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t parse_size(const char* s) {
  char* end = NULL;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024.0;
  if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024.0;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024.0 * 1024.0;
  return (size_t)v;
}

static float value_of(int rank, size_t i) { return (float)((int)((i * 7 + rank * 13) % 17) - 8); }

int main(int argc, char** argv) {
  size_t min_bytes = 8, max_bytes = 64u << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  MPI_Init(&argc, &argv);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b"))
      min_bytes = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e"))
      max_bytes = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f"))
      factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n"))
      iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w"))
      warmup = atoi(argv[i + 1]);
  }
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t max_count = max_bytes / sizeof(float) + 1;
  float* send = malloc(max_count * sizeof(float));
  float* recv = malloc(max_count * sizeof(float));
  if (rank == 0) {
    printf("# mpi_allreduce_perf: MPI_Allreduce float sum, %d processes\n", nranks);
    printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
           "root", "time", "algbw", "busbw", "#wrong");
  }
  int failed = 0;
  for (size_t bytes = min_bytes; bytes <= max_bytes;) {
    size_t count = bytes / sizeof(float);
    for (size_t i = 0; i < count; ++i) send[i] = value_of(rank, i);
    for (int i = 0; i < warmup; ++i) {
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double usec = (MPI_Wtime() - t0) * 1e6 / iters;
    double sum_usec = 0;
    MPI_Allreduce(&usec, &sum_usec, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    usec = sum_usec / nranks;
    long wrong = 0, total_wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < nranks; ++r) want += value_of(r, i);
      if (recv[i] != want) ++wrong;
    }
    MPI_Allreduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total_wrong) failed = 1;
    if (rank == 0) {
      double algbw = (double)(count * sizeof(float)) / usec / 1e3;
      double busbw = nranks > 1 ? algbw * 2.0 * (nranks - 1) / nranks : algbw;
      printf("%12zu  %12zu  %8s  %6s  %6d  %8.2f  %6.2f  %6.2f  %6ld\n", count * sizeof(float),
             count, "float", "sum", -1, usec, algbw, busbw, total_wrong);
      fflush(stdout);
    }
    size_t next = (size_t)(bytes * factor);
    if (next <= bytes) break;
    bytes = next;
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return failed;
}
