/* shine bench cpu: the machine's peak single-precision FMA throughput. Each OpenMP thread
   runs ACC independent chains of vector FMAs (more than latency x FMA units, so the units
   never wait) on GCC vectors of WIDTH bytes; prints one JSON line per width the compiler
   targets (-march=native): 64 bytes with AVX-512, 32 with AVX2 and FMA. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ACC 12
#define ITERS 2000000L

#define PEAK(NAME, WIDTH)                                                                     \
  typedef float NAME##_v __attribute__((vector_size(WIDTH)));                                 \
  static double NAME(int threads) {                                                           \
    double best = 1e30, sink = 0.0;                                                           \
    for (int rep = 0; rep < 5; rep++) {                                                       \
      double t0 = omp_get_wtime();                                                            \
      _Pragma("omp parallel num_threads(threads) reduction(+ : sink)") {                      \
        NAME##_v acc[ACC], mul, add;                                                          \
        for (int l = 0; l < (WIDTH) / 4; l++) { mul[l] = 0.9999999f; add[l] = 1e-7f; }        \
        for (int k = 0; k < ACC; k++) acc[k] = add * (float)(k + omp_get_thread_num());       \
        for (long i = 0; i < ITERS; i++) {                                                    \
          _Pragma("GCC unroll 12") for (int k = 0; k < ACC; k++) acc[k] = acc[k] * mul + add; \
          __asm__ volatile("" : "+x"(mul));                                                   \
        }                                                                                     \
        for (int k = 0; k < ACC; k++) sink += acc[k][0];                                      \
      }                                                                                       \
      double t = omp_get_wtime() - t0;                                                        \
      if (t < best) best = t;                                                                 \
    }                                                                                         \
    if (sink == 42.0) puts("");                                                               \
    return 2.0 * ACC * ((WIDTH) / 4) * (double)ITERS * threads / best / 1e9;                  \
  }

#if defined(__AVX512F__)
PEAK(peak512, 64)
#endif
#if defined(__AVX2__) && defined(__FMA__)
PEAK(peak256, 32)
#endif

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1) return 2;
#if defined(__AVX512F__)
  printf("{\"isa\": \"avx512\", \"lanes\": 16, \"gflops\": %.3f}\n", peak512(threads));
#endif
#if defined(__AVX2__) && defined(__FMA__)
  printf("{\"isa\": \"avx2\", \"lanes\": 8, \"gflops\": %.3f}\n", peak256(threads));
#endif
  return 0;
}
