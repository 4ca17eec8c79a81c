/* Driver of a sanitized module, written by the shine runtime (crates/runtime/src/driver.c).
 *
 * usage: driver REQUEST OUTPUT WARMUP RUNS
 * REQUEST (native byte order): u64 n, i64 sizes[n], u64 m, then m buffers, each u64 len and
 * len bytes; buffer 0 is the output's initial contents, buffers 1.. are the inputs.
 * OUTPUT receives the output buffer's bytes, then RUNS doubles: each timed run in ms.
 * Each buffer is allocated with its exact length, so that a sanitizer sees every overflow. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void @ENTRY@(void *const *buffers, const int64_t *sizes);

static void die(const char *what, const char *detail) {
  fprintf(stderr, "shine driver: %s %s\n", what, detail);
  exit(2);
}

static uint64_t read_u64(FILE *f, const char *path) {
  uint64_t v;
  if (fread(&v, sizeof v, 1, f) != 1) die("truncated request", path);
  return v;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
  if (argc != 5) die("usage: driver REQUEST OUTPUT WARMUP RUNS", "");
  FILE *in = fopen(argv[1], "rb");
  if (!in) die("cannot open", argv[1]);
  long warmup = atol(argv[3]), runs = atol(argv[4]);
  uint64_t n = read_u64(in, argv[1]);
  int64_t *sizes = malloc((n + 1) * sizeof *sizes);
  for (uint64_t i = 0; i < n; i++) sizes[i] = (int64_t)read_u64(in, argv[1]);
  uint64_t m = read_u64(in, argv[1]);
  if (m == 0) die("no output buffer in", argv[1]);
  void **buffers = malloc(m * sizeof *buffers);
  uint64_t *lens = malloc(m * sizeof *lens);
  for (uint64_t i = 0; i < m; i++) {
    lens[i] = read_u64(in, argv[1]);
    if (posix_memalign(&buffers[i], 64, lens[i]) != 0) die("out of memory", "");
    if (fread(buffers[i], 1, lens[i], in) != lens[i]) die("truncated request", argv[1]);
  }
  fclose(in);
  double *times = malloc((runs + 1) * sizeof *times);
  for (long r = 0; r < warmup + runs; r++) {
    double start = now_ms();
    @ENTRY@(buffers, sizes);
    if (r >= warmup) times[r - warmup] = now_ms() - start;
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out) die("cannot create", argv[2]);
  if (fwrite(buffers[0], 1, lens[0], out) != lens[0] ||
      fwrite(times, sizeof *times, runs, out) != (size_t)runs || fclose(out) != 0)
    die("cannot write", argv[2]);
  for (uint64_t i = 0; i < m; i++) free(buffers[i]);
  free(buffers);
  free(lens);
  free(sizes);
  free(times);
  return 0;
}
