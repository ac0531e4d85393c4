/* Streaming bandwidth of one kernel with OMP_NUM_THREADS threads, each on its
 * own arrays of `bytes_per_thread` in total (first-touch placement).  Counts
 * the bytes the kernel names (no write-allocate), as likwid-bench does.
 *   usage: stream KERNEL BYTES_PER_THREAD MIN_SECONDS [serve] [row=W]
 *   serve: the arrays allocated once, one measurement per line read from stdin
 *   KERNEL: load copy update triad daxpy, and copy_nt triad_nt: copy and triad
 *   with non-temporal stores (the written line goes to memory without being
 *   read first: for them the bytes named are the bytes moved), and stencil:
 *   a 2D five-point stencil over rows of W doubles (row=W, default 4096),
 *   its interior counted as one stream read and one written
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

enum { LOAD_K, UPDATE_K, COPY_K, DAXPY_K, TRIAD_K, COPY_NT_K, TRIAD_NT_K, STENCIL_K };
/* name, arrays (one stream each), bytes named per iteration */
static const struct { const char *name; int arrays; double bytes; } KERNELS[] = {
    {"load", 1, 8}, {"update", 1, 16}, {"copy", 2, 16}, {"daxpy", 2, 24}, {"triad", 4, 32},
    {"copy_nt", 2, 16}, {"triad_nt", 4, 32}, {"stencil", 2, 16}};

static long row = 4096;   /* the stencil's row length (doubles) */

/* b = the five-point sum of a over the interior of rows of `row`: its rows above and below are
   reused from a cache only where three of them fit (the layer condition) */
static void stencil(double *restrict b, const double *restrict a, long n) {
    long rows = n / row;
    for (long j = 1; j < rows - 1; ++j) {
        const double *restrict up = a + (j - 1) * row, *restrict mid = a + j * row, *restrict down = a + (j + 1) * row;
        double *restrict out = b + j * row;
        for (long i = 1; i < row - 1; ++i) out[i] = up[i] + mid[i - 1] + mid[i] + mid[i + 1] + down[i];
    }
}

/* iterations of one pass over arrays of n elements (the stencil: its interior) */
static double iterations(int kernel, long n) {
    return kernel == STENCIL_K ? (double)(n / row - 2) * (double)(row - 2) : (double)n;
}

/* One pass of the kernel over the thread's arrays; returns what keeps the load from being dead. */
static double sweep(int kernel, double *restrict a, double *restrict b, double *restrict c, double *restrict d,
                    long n) {
    const double s = 1.0000001;
    double acc = 0;
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
    case STENCIL_K: stencil(b, a, n); break;
#if NT_WIDTH
    case COPY_NT_K: copy_nt(b, a, n); break;
    case TRIAD_NT_K: triad_nt(a, b, c, d, n); break;
#endif
    }
    __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
    return acc;
}

/* Each thread's arrays (only those the kernel streams: first touch of the others costs time, not
   bandwidth), allocated and first touched by the thread that sweeps them. */
static void allocate(double **v, int arrays, long n) {
    const double init[4] = {1.0, 2.0, 0.5, 1.5};
    for (int j = 0; j < arrays; ++j) {
        v[j] = aligned_alloc(64, n * 8);
        for (long i = 0; i < n; ++i) v[j][i] = init[j];
    }
}

/* reps sweeps on every thread at once, timed between two barriers: the seconds they took. */
static double timed(int kernel, double **v, long n, long reps, double *sink) {
    double elapsed = 0;
    #pragma omp parallel reduction(+:sink[:1])
    {
        double **w = v + 4 * omp_get_thread_num(), acc = 0;
        #pragma omp barrier
        #pragma omp master
        elapsed = omp_get_wtime();
        for (long r = 0; r < reps; ++r) acc += sweep(kernel, w[0], w[1], w[2], w[3], n);
        #pragma omp barrier
        #pragma omp master
        elapsed = omp_get_wtime() - elapsed;
        sink[0] += acc + w[0][n / 2] + (w[1] ? w[1][n / 3] : 0.0);
    }
    return elapsed;
}

/* Repetitions grown until they take min_s; prints threads and GB/s.  reps: where to start, and
   where the next measurement starts (a served one keeps its calibration). */
static void measure(int kernel, double **v, long n, double min_s, long *reps) {
    int threads = omp_get_max_threads();
    double per_it = KERNELS[kernel].bytes, sink = 0, elapsed;
    for (;;) {
        elapsed = timed(kernel, v, n, *reps, &sink);
        if (elapsed >= min_s || *reps > (1L << 40)) break;
        *reps = (long)(*reps * (elapsed > 0 ? 1.5 * min_s / elapsed : 10)) + 1;
    }
    printf("%d %.4f %g\n", threads, per_it * iterations(kernel, n) * *reps * threads / elapsed / 1e9,
           sink > 0 ? 0.0 : 1.0);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: stream KERNEL BYTES MIN_SECONDS [serve] [row=W]\n"); return 2; }
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
    int serve = 0;
    for (int i = 4; i < argc; ++i) {
        if (!strcmp(argv[i], "serve")) serve = 1;
        else if (!strncmp(argv[i], "row=", 4)) row = atol(argv[i] + 4);
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    if (row < 3) { fprintf(stderr, "row=W: W must be 3 or more\n"); return 2; }
    int arrays = KERNELS[kernel].arrays;
    long n = bytes / (8 * arrays);
    if (n < 64) n = 64;
    if (kernel == STENCIL_K && n < 3 * row) n = 3 * row;   /* one interior row at least */
    double **v = calloc((size_t)4 * omp_get_max_threads(), sizeof *v);
    #pragma omp parallel
    allocate(v + 4 * omp_get_thread_num(), arrays, n);
    long reps = 1;
    if (!serve) {
        measure(kernel, v, n, min_s, &reps);
    } else {  /* one measurement per line read, the arrays kept (tune's probe between its rounds) */
        char line[64];
        while (fgets(line, sizeof line, stdin)) measure(kernel, v, n, min_s, &reps);
    }
    for (int t = 0; t < 4 * omp_get_max_threads(); ++t) free(v[t]);
    free(v);
    return 0;
}
