/* Driver of a module, written by the shine runtime (crates/runtime/src/driver.c): every module
 * runs in its own process, so that a crash of the generated code cannot take the compiler
 * down, and its floating-point state (e.g. flush-to-zero from -ffast-math) stays its own.
 *
 * usage: driver EXCHANGE
 * EXCHANGE is a file of native-endian 64-bit words (see exchange.rs):
 *   magic, n (sizes), m (buffers), warmup, runs, times_offset, done, status,
 *   sizes[n], then m pairs (offset, len): the output buffers (one, or one per array of a tuple
 *   result), then the inputs.
 * The driver maps the file, runs the entry point warmup + runs times on the buffers in place,
 * and writes each timed run (ms, a double) at times_offset; the outputs are left in place.
 * Built with SHINE_EXACT_BUFFERS (sanitized modules), each buffer is copied to an allocation of
 * its exact length, so that a sanitizer sees every overflow, and copied back after the runs
 * (the inputs are const: copying them back changes nothing).
 * After the last run (or a run whose entry point returned a non-zero status), the driver
 * writes that status and then DONE in the header (`done` is 0 until then), so that the runtime
 * can tell a finished run from a process that some code ended early (`exit` in a foreign
 * function, even with atexit handlers: they run before DONE is ever written).
 * A non-zero status also exits with 3; a malformed request exits with 2. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int @ENTRY@(void *const *buffers, const int64_t *sizes);

#define MAGIC 0x5348494e45583031ull /* exchange.rs, MAGIC */
#define DONE 0x53484e45444f4e45ull  /* exchange.rs, DONE */
#define HEADER 8

static void die(const char *what, const char *detail) {
  fprintf(stderr, "shine driver: %s %s\n", what, detail);
  exit(2);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Whether [offset, offset + len) lies within a file of `size` bytes. */
static int fits(uint64_t offset, uint64_t len, uint64_t size) {
  return offset <= size && len <= size - offset;
}

int main(int argc, char **argv) {
  if (argc != 2) die("usage: driver EXCHANGE", "");
  int fd = open(argv[1], O_RDWR);
  if (fd < 0) die("cannot open", argv[1]);
  struct stat st;
  if (fstat(fd, &st) != 0) die("cannot stat", argv[1]);
  uint64_t size = (uint64_t)st.st_size;
  if (size < HEADER * 8) die("truncated request", argv[1]);
  unsigned char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) die("cannot map", argv[1]);
  close(fd);
  uint64_t *word = (uint64_t *)base;
  uint64_t n = word[1], m = word[2], warmup = word[3], runs = word[4], times_at = word[5];
  if (word[0] != MAGIC || m == 0 || n > size / 8 || m > size / 16 ||
      !fits(8 * HEADER, 8 * n + 16 * m, size) || runs > size / 8 ||
      !fits(times_at, 8 * runs, size) || times_at % 8 != 0)
    die("malformed request", argv[1]);
  const int64_t *sizes = (const int64_t *)(word + HEADER);
  const uint64_t *spans = word + HEADER + n;
  void **buffers = malloc((m + 1) * sizeof *buffers);
  if (!buffers) die("out of memory", "");
  for (uint64_t i = 0; i < m; i++) {
    uint64_t offset = spans[2 * i], len = spans[2 * i + 1];
    if (!fits(offset, len, size)) die("malformed request", argv[1]);
    buffers[i] = base + offset;
#ifdef SHINE_EXACT_BUFFERS
    void *exact = NULL;
    if (posix_memalign(&exact, 64, len ? len : 1) != 0) die("out of memory", "");
    memcpy(exact, buffers[i], len);
    buffers[i] = exact;
#endif
  }
  double *times = (double *)(base + times_at);
  for (uint64_t r = 0; r < warmup + runs; r++) {
    double start = now_ms();
    int status = @ENTRY@(buffers, sizes);
    if (status != 0) {
      /* the program stopped on an error: report its status (module.rs, STATUS_EXIT) */
      word[7] = (uint64_t)(int64_t)status;
      word[6] = DONE;
      return 3;
    }
    if (r >= warmup) times[r - warmup] = now_ms() - start;
  }
#ifdef SHINE_EXACT_BUFFERS
  for (uint64_t i = 0; i < m; i++) {
    memcpy(base + spans[2 * i], buffers[i], spans[2 * i + 1]);
    free(buffers[i]);
  }
#endif
  free(buffers);
  word[7] = 0;
  word[6] = DONE;
  if (munmap(base, size) != 0) die("cannot unmap", argv[1]);
  return 0;
}
