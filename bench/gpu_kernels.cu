// The hand-written CUDA anchors of scripts/gpu-bench.sh, adapted from this project's
// ../shared/anchors/gpu/kernels.cu (same kernels, same launches), with a command line so that
// the benchmark can time one kernel at a time, interleaved with shine's runs:
//
//   gpu_kernels KERNEL N RUNS     ->  one JSON line: {"kernel", "n", "runs", "samples_ms",
//                                      "median_ms", "checksum"}
//
// KERNEL: sgemm_naive, sgemm_tiled, sgemm_reg (N x N x N, f32), jacobi2d (N x N, 5 points,
// clamped borders), heat3d (N^3, 7 points; borders copied, as in the original). Inputs are
// pseudo-random (not zeros), filled on the device; one untimed warm-up launch, then RUNS launches
// each timed with CUDA events. Every CUDA call and launch is checked.
//
// Build: nvcc -O3 -arch=sm_90 -o gpu_kernels bench/gpu_kernels.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e = (x);                                                               \
    if (e != cudaSuccess) {                                                            \
      fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

__global__ void sgemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < N && y < M) {
    float acc = 0;
    for (int k = 0; k < K; k++) acc += A[y * K + k] * B[k * N + x];
    C[y * N + x] = acc;
  }
}
#define T 32
__global__ void sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[T][T], Bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y, x = blockIdx.x * T + tx, y = blockIdx.y * T + ty;
  float acc = 0;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty][tx] = A[y * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + x];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; k++) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[y * N + x] = acc;
}
// 2D register-blocked sgemm: each thread computes 8x8 outputs (BM=BN=128, BK=8)
__global__ void sgemm_reg(const float* __restrict__ A, const float* __restrict__ B,
                          float* __restrict__ C, int M, int N, int K) {
  const int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  __shared__ float As[BK][BM], Bs[BK][BN];
  int tid = threadIdx.x;
  int tr = tid / 16, tc = tid % 16;
  const float* Ab = A + blockIdx.y * BM * K;
  const float* Bb = B + blockIdx.x * BN;
  float acc[TM][TN] = {0};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += 256) {
      int r = i / BK, c = i % BK;
      As[c][r] = Ab[r * K + k0 + c];
    }
    for (int i = tid; i < BK * BN; i += 256) {
      int r = i / BN, c = i % BN;
      Bs[r][c] = Bb[(k0 + r) * N + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; k++) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i++) a[i] = As[k][tr * TM + i];
#pragma unroll
      for (int j = 0; j < TN; j++) b[j] = Bs[k][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; i++)
    for (int j = 0; j < TN; j++)
      C[(blockIdx.y * BM + tr * TM + i) * N + blockIdx.x * BN + tc * TN + j] = acc[i][j];
}
__global__ void jacobi2d(const float* in, float* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n || y >= n) return;
  int xm = x > 0 ? x - 1 : 0, xp = x < n - 1 ? x + 1 : n - 1, ym = y > 0 ? y - 1 : 0,
      yp = y < n - 1 ? y + 1 : n - 1;
  out[y * n + x] =
      0.2f * (in[y * n + x] + in[y * n + xm] + in[y * n + xp] + in[ym * n + x] + in[yp * n + x]);
}
__global__ void heat3d(const float* in, float* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y,
      z = blockIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1) {
    if (x < n && y < n && z < n) out[(z * n + y) * n + x] = in[(z * n + y) * n + x];
    return;
  }
  size_t i = ((size_t)z * n + y) * n + x, s = n, p = (size_t)n * n;
  out[i] = 0.125f * (in[i + 1] - 2 * in[i] + in[i - 1]) +
           0.125f * (in[i + s] - 2 * in[i] + in[i - s]) +
           0.125f * (in[i + p] - 2 * in[i] + in[i - p]) + in[i];
}
// Pseudo-random values in [-1, 1) (a hash of the index), so that nothing is timed on zeros.
__global__ void fill(float* x, size_t count, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = (h & 0xffffff) / 8388608.0f - 1.0f;
  }
}

static float* device_random(size_t count, unsigned seed) {
  float* p;
  CK(cudaMalloc(&p, count * sizeof(float)));
  fill<<<1024, 256>>>(p, count, seed);
  CK(cudaGetLastError());
  return p;
}

template <class F>
static std::vector<float> timeit(F launch, int runs) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int r = 0; r < runs; r++) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaGetLastError());
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    ts.push_back(ms);
  }
  return ts;
}

static double checksum(const float* d, size_t count) {
  std::vector<float> h(count);
  CK(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < count; i += 97) s += h[i];
  return s;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s sgemm_naive|sgemm_tiled|sgemm_reg|jacobi2d|heat3d N RUNS\n",
            argv[0]);
    return 2;
  }
  const char* k = argv[1];
  int n = atoi(argv[2]), runs = atoi(argv[3]);
  if (n <= 0 || runs <= 0) {
    fprintf(stderr, "N and RUNS must be positive\n");
    return 2;
  }
  std::vector<float> ts;
  double sum = 0;
  if (!strncmp(k, "sgemm_", 6)) {
    if (n % 128) {
      fprintf(stderr, "sgemm needs N divisible by 128\n");
      return 2;
    }
    size_t sz = (size_t)n * n;
    float *A = device_random(sz, 1), *B = device_random(sz, 2), *C;
    CK(cudaMalloc(&C, sz * 4));
    if (!strcmp(k, "sgemm_naive"))
      ts = timeit([&] { sgemm_naive<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(A, B, C, n, n, n); },
                  runs);
    else if (!strcmp(k, "sgemm_tiled"))
      ts = timeit([&] { sgemm_tiled<<<dim3(n / T, n / T), dim3(T, T)>>>(A, B, C, n, n, n); },
                  runs);
    else if (!strcmp(k, "sgemm_reg"))
      ts = timeit([&] { sgemm_reg<<<dim3(n / 128, n / 128), 256>>>(A, B, C, n, n, n); }, runs);
    else {
      fprintf(stderr, "unknown kernel %s\n", k);
      return 2;
    }
    sum = checksum(C, sz);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
  } else if (!strcmp(k, "jacobi2d")) {
    if (n % 32) {
      fprintf(stderr, "jacobi2d needs N divisible by 32\n");
      return 2;
    }
    size_t sz = (size_t)n * n;
    float *a = device_random(sz, 3), *b;
    CK(cudaMalloc(&b, sz * 4));
    ts = timeit([&] { jacobi2d<<<dim3(n / 32, n / 8), dim3(32, 8)>>>(a, b, n); }, runs);
    sum = checksum(b, sz);
    CK(cudaFree(a));
    CK(cudaFree(b));
  } else if (!strcmp(k, "heat3d")) {
    if (n % 32) {
      fprintf(stderr, "heat3d needs N divisible by 32\n");
      return 2;
    }
    size_t sz = (size_t)n * n * n;
    float *a = device_random(sz, 4), *b;
    CK(cudaMalloc(&b, sz * 4));
    ts = timeit([&] { heat3d<<<dim3(n / 32, n / 8, n), dim3(32, 8)>>>(a, b, n); }, runs);
    sum = checksum(b, sz);
    CK(cudaFree(a));
    CK(cudaFree(b));
  } else {
    fprintf(stderr, "unknown kernel %s\n", k);
    return 2;
  }
  std::vector<float> sorted = ts;
  std::sort(sorted.begin(), sorted.end());
  printf("{\"kernel\":\"%s\",\"n\":%d,\"runs\":%d,\"median_ms\":%.5f,\"checksum\":%.6g,\"samples_ms\":[",
         k, n, runs, sorted[sorted.size() / 2], sum);
  for (size_t i = 0; i < ts.size(); i++) printf("%s%.5f", i ? "," : "", ts[i]);
  printf("]}\n");
  return 0;
}
