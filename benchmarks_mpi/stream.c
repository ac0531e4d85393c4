/* Streaming bandwidth of one kernel with OMP_NUM_THREADS threads, each on its
 * own arrays of `bytes_per_thread` in total (first-touch placement).  Counts
 * the bytes the kernel names (no write-allocate), as likwid-bench does.
 *   usage: stream KERNEL BYTES_PER_THREAD MIN_SECONDS
 *   KERNEL: load copy update triad daxpy, and copy_nt triad_nt: copy and triad
 *   with non-temporal stores (the written line goes to memory without being
 *   read first: for them the bytes named are the bytes moved)
 *   prints: threads GB/s;  exit status 3: no non-temporal stores on this target */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* non-temporal stores of one vector register, where the target has them: x86's streaming
   stores (the widest the flags allow), or clang's builtin elsewhere; NT_WIDTH 0: none */
#if defined(__AVX512F__)
#include <immintrin.h>
#define NT_WIDTH 8
typedef __m512d vec;
#define LOAD _mm512_load_pd
#define ADD _mm512_add_pd
#define MUL _mm512_mul_pd
#define ZERO _mm512_setzero_pd
#define STREAM _mm512_stream_pd
#define FENCE _mm_sfence
#elif defined(__AVX__)
#include <immintrin.h>
#define NT_WIDTH 4
typedef __m256d vec;
#define LOAD _mm256_load_pd
#define ADD _mm256_add_pd
#define MUL _mm256_mul_pd
#define ZERO _mm256_setzero_pd
#define STREAM _mm256_stream_pd
#define FENCE _mm_sfence
#elif defined(__SSE2__)
#include <emmintrin.h>
#define NT_WIDTH 2
typedef __m128d vec;
#define LOAD _mm_load_pd
#define ADD _mm_add_pd
#define MUL _mm_mul_pd
#define ZERO _mm_setzero_pd
#define STREAM _mm_stream_pd
#define FENCE _mm_sfence
#elif defined(__clang__)
#define NT_WIDTH 1
typedef double vec;
#define LOAD(p) (*(p))
#define ADD(x, y) ((x) + (y))
#define MUL(x, y) ((x) * (y))
#define ZERO() 0.0
#define STREAM(p, v) __builtin_nontemporal_store((v), (p))
#define FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#else
#define NT_WIDTH 0
#endif

#if NT_WIDTH
/* b = a + 0.0 and a = b + c * d, the vectors' lines written around the caches; the arrays are
   64-byte aligned, and so is every NT_WIDTH-th element */
static void copy_nt(double *restrict b, const double *restrict a, long n) {
    long i = 0;
    for (; i + NT_WIDTH <= n; i += NT_WIDTH) STREAM(b + i, ADD(LOAD(a + i), ZERO()));
    for (; i < n; ++i) b[i] = a[i] + 0.0;
    FENCE();
}

static void triad_nt(double *restrict a, const double *restrict b, const double *restrict c,
                     const double *restrict d, long n) {
    long i = 0;
    for (; i + NT_WIDTH <= n; i += NT_WIDTH) STREAM(a + i, ADD(LOAD(b + i), MUL(LOAD(c + i), LOAD(d + i))));
    for (; i < n; ++i) a[i] = b[i] + c[i] * d[i];
    FENCE();
}
#endif

enum { LOAD_K, UPDATE_K, COPY_K, DAXPY_K, TRIAD_K, COPY_NT_K, TRIAD_NT_K };
/* name, arrays (one stream each), bytes named per iteration */
static const struct { const char *name; int arrays; double bytes; } KERNELS[] = {
    {"load", 1, 8}, {"update", 1, 16}, {"copy", 2, 16}, {"daxpy", 2, 24}, {"triad", 4, 32},
    {"copy_nt", 2, 16}, {"triad_nt", 4, 32}};

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: stream KERNEL BYTES MIN_SECONDS\n"); return 2; }
    int kernel = -1;
    for (int i = 0; i < (int)(sizeof KERNELS / sizeof *KERNELS); ++i)
        if (!strcmp(argv[1], KERNELS[i].name)) kernel = i;
    if (kernel < 0) { fprintf(stderr, "unknown kernel %s\n", argv[1]); return 2; }
    if ((kernel == COPY_NT_K || kernel == TRIAD_NT_K) && !NT_WIDTH) {
        fprintf(stderr, "%s: no non-temporal stores on this target\n", argv[1]);
        return 3;
    }
    long bytes = atol(argv[2]);
    double min_s = atof(argv[3]);
    int arrays = KERNELS[kernel].arrays;
    double per_it = KERNELS[kernel].bytes;
    long n = bytes / (8 * arrays);
    if (n < 64) n = 64;
    long reps = 1;
    double elapsed = 0, sink = 0;
    int threads = 1;
    for (;;) {
        #pragma omp parallel reduction(+:sink)
        {
            /* only the arrays the kernel streams: first touch of the others cost time, not bandwidth */
            double *v[4] = {0};
            const double init[4] = {1.0, 2.0, 0.5, 1.5};
            for (int j = 0; j < arrays; ++j) {
                v[j] = aligned_alloc(64, n * 8);
                for (long i = 0; i < n; ++i) v[j][i] = init[j];
            }
            double *a = v[0], *b = v[1], *c = v[2], *d = v[3];
            double s = 1.0000001, acc = 0;
            #pragma omp barrier
            #pragma omp master
            { threads = omp_get_num_threads(); elapsed = omp_get_wtime(); }
            for (long r = 0; r < reps; ++r) {
                switch (kernel) {
                case LOAD_K: {  /* vectorised reduction: not latency-bound */
                    /* 32 partial sums: independent add chains (a single vector accumulator is
                       bound by the add latency, not by bandwidth, on CPUs with narrow vectors) */
                    double p[32] = {0};
                    long i = 0;
                    for (; i + 32 <= n; i += 32)
                        for (int k = 0; k < 32; ++k) p[k] += a[i + k];
                    for (; i < n; ++i) p[0] += a[i];
                    for (int k = 0; k < 32; ++k) acc += p[k];
                    break;
                }
                case UPDATE_K: for (long i = 0; i < n; ++i) a[i] = s * a[i]; break;
                /* copy: + 0.0 (not foldable while zeros are signed) keeps the compiler from
                   turning the loop into a memcpy call, whose non-temporal stores for large sizes
                   skip the write-allocate read that the bytes' correction assumes */
                case COPY_K: for (long i = 0; i < n; ++i) b[i] = a[i] + 0.0; break;
                case DAXPY_K: for (long i = 0; i < n; ++i) a[i] = a[i] + s * b[i]; break;
                case TRIAD_K: for (long i = 0; i < n; ++i) a[i] = b[i] + c[i] * d[i]; break;  /* 3 read, 1 written */
#if NT_WIDTH
                case COPY_NT_K: copy_nt(b, a, n); break;
                case TRIAD_NT_K: triad_nt(a, b, c, d, n); break;
#endif
                }
                __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
            }
            #pragma omp barrier
            #pragma omp master
            elapsed = omp_get_wtime() - elapsed;
            sink += acc + a[n / 2] + (b ? b[n / 3] : 0.0);
            for (int j = 0; j < arrays; ++j) free(v[j]);
        }
        if (elapsed >= min_s || reps > (1L << 40)) break;
        reps = (long)(reps * (elapsed > 0 ? 1.5 * min_s / elapsed : 10)) + 1;
    }
    printf("%d %.4f %g\n", threads, per_it * n * reps * threads / elapsed / 1e9, sink > 0 ? 0.0 : 1.0);
    return 0;
}
