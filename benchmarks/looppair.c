/* A loop pair, as one loop and as two loops per tile (benchmarks/loops.py --pair):
 *   one loop:  a[i] = p(b[i]) + c[i]              p: K multiply-adds (Horner)
 *   per tile:  F[i] = p(b[t0 + i]); then a[t0 + i] = F[i] + c[t0 + i]
 * and each of the two tile loops alone, round-robin, REPS rounds, the median of each printed in
 * cycles per cache line of a at the clock given (a fused sweep's RHS into its F, then the linear
 * combination reading F back: docs/node-model.md, "The loops of a fused sweep").
 *   usage: looppair N T REPS INNER CLOCK_HZ     (OMP_NUM_THREADS threads, each its share of N) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#ifndef K
#define K 16
#endif

static inline double poly(double x) {
    double p = 0.5;
#pragma GCC unroll 64
    for (int k = 0; k < K; ++k) p = p * x + 0.25;
    return p;
}

typedef void kernel(long, double *restrict, const double *restrict, const double *restrict, long, double *restrict);

__attribute__((noinline)) static void one_loop(long n, double *restrict a, const double *restrict b,
                                               const double *restrict c, long T, double *restrict F) {
    (void)T; (void)F;
    #pragma omp for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = poly(b[i]) + c[i];
}

__attribute__((noinline)) static void two_loops(long n, double *restrict a, const double *restrict b,
                                                const double *restrict c, long T, double *restrict F) {
    #pragma omp for schedule(static)
    for (long t0 = 0; t0 < n; t0 += T) {
        long m = t0 + T < n ? T : n - t0;
        for (long i = 0; i < m; ++i) F[i] = poly(b[t0 + i]);
        for (long i = 0; i < m; ++i) a[t0 + i] = F[i] + c[t0 + i];
    }
}

__attribute__((noinline)) static void first_alone(long n, double *restrict a, const double *restrict b,
                                                  const double *restrict c, long T, double *restrict F) {
    (void)a; (void)c;
    #pragma omp for schedule(static)
    for (long t0 = 0; t0 < n; t0 += T) {
        long m = t0 + T < n ? T : n - t0;
        for (long i = 0; i < m; ++i) F[i] = poly(b[t0 + i]);
    }
}

__attribute__((noinline)) static void second_alone(long n, double *restrict a, const double *restrict b,
                                                   const double *restrict c, long T, double *restrict F) {
    (void)b;
    #pragma omp for schedule(static)
    for (long t0 = 0; t0 < n; t0 += T) {
        long m = t0 + T < n ? T : n - t0;
        for (long i = 0; i < m; ++i) a[t0 + i] = F[i] + c[t0 + i];
    }
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    if (argc < 6) { fprintf(stderr, "usage: looppair N T REPS INNER CLOCK_HZ\n"); return 2; }
    long n = atol(argv[1]), T = atol(argv[2]);
    int reps = atoi(argv[3]), inner = atoi(argv[4]);
    double clock = atof(argv[5]);
    if (n < 8 || T < 8 || reps < 1 || reps > 99 || inner < 1 || clock <= 0) { fprintf(stderr, "bad arguments\n"); return 2; }
    double *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 8), *c = aligned_alloc(64, n * 8);
    kernel *ks[4] = {one_loop, two_loops, first_alone, second_alone};
    double ts[4][100];
    #pragma omp parallel
    {
        double *F = aligned_alloc(64, (T + 8) * 8);
        for (long i = 0; i < T + 8; ++i) F[i] = 0.0;
        #pragma omp for schedule(static)
        for (long i = 0; i < n; ++i) { a[i] = 0.0; b[i] = 0.999; c[i] = 1.0; }
        for (int r = 0; r < reps; ++r)
            for (int q = 0; q < 4; ++q) {
                double t0 = 0.0;
                #pragma omp barrier
                #pragma omp master
                t0 = omp_get_wtime();
                for (int z = 0; z < inner; ++z) ks[q](n, a, b, c, T, F);
                #pragma omp barrier
                #pragma omp master
                ts[q][r] = omp_get_wtime() - t0;
            }
        free(F);
    }
    double lines = n / 8.0 / omp_get_max_threads() * inner;
    for (int q = 0; q < 4; ++q) {
        qsort(ts[q], reps, sizeof(double), cmp);
        printf("%s%.2f", q ? " " : "", ts[q][reps / 2] * clock / lines);
    }
    printf("\n");
    return a[5] > 1e300;
}
