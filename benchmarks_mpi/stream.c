/* Streaming bandwidth of one kernel with OMP_NUM_THREADS threads, each on its
 * own arrays of `bytes_per_thread` in total (first-touch placement).  Counts
 * the bytes the kernel names (no write-allocate), as likwid-bench does.
 *   usage: stream KERNEL BYTES_PER_THREAD MIN_SECONDS
 *   KERNEL: load copy update triad daxpy;  prints: threads GB/s            */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: stream KERNEL BYTES MIN_SECONDS\n"); return 2; }
    const char *k = argv[1];
    long bytes = atol(argv[2]);
    double min_s = atof(argv[3]);
    int streams = !strcmp(k, "load") ? 1 : !strcmp(k, "update") ? 1 : !strcmp(k, "copy") ? 2
                : !strcmp(k, "daxpy") ? 2 : !strcmp(k, "triad") ? 4 : 0;
    if (!streams) { fprintf(stderr, "unknown kernel %s\n", k); return 2; }
    double per_it = !strcmp(k, "load") ? 8 : !strcmp(k, "update") ? 16 : !strcmp(k, "copy") ? 16
                  : !strcmp(k, "daxpy") ? 24 : 32;
    long n = bytes / (8 * streams);
    if (n < 64) n = 64;
    long reps = 1;
    double elapsed = 0, sink = 0;
    int threads = 1;
    for (;;) {
        #pragma omp parallel reduction(+:sink)
        {
            double *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 8), *c = aligned_alloc(64, n * 8),
                   *d = aligned_alloc(64, n * 8);
            for (long i = 0; i < n; ++i) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.5; d[i] = 1.5; }
            double s = 1.0000001, acc = 0;
            #pragma omp barrier
            #pragma omp master
            { threads = omp_get_num_threads(); elapsed = omp_get_wtime(); }
            for (long r = 0; r < reps; ++r) {
                if (streams == 1 && per_it == 8) {  /* vectorised reduction: not latency-bound */
                    /* 32 partial sums: independent add chains (a single vector accumulator is
                       bound by the add latency, not by bandwidth, on CPUs with narrow vectors) */
                    double p[32] = {0};
                    long i = 0;
                    for (; i + 32 <= n; i += 32)
                        for (int k = 0; k < 32; ++k) p[k] += a[i + k];
                    for (; i < n; ++i) p[0] += a[i];
                    for (int k = 0; k < 32; ++k) acc += p[k];
                }
                else if (per_it == 16 && streams == 1) { for (long i = 0; i < n; ++i) a[i] = s * a[i]; }
                /* copy: + 0.0 (not foldable while zeros are signed) keeps the compiler from
                   turning the loop into a memcpy call, whose non-temporal stores for large sizes
                   skip the write-allocate read that the bytes' correction assumes */
                else if (streams == 2 && per_it == 16) { for (long i = 0; i < n; ++i) b[i] = a[i] + 0.0; }
                else if (streams == 2) { for (long i = 0; i < n; ++i) a[i] = a[i] + s * b[i]; }
                else { for (long i = 0; i < n; ++i) a[i] = b[i] + c[i] * d[i]; }   /* triad: 3 read, 1 written */
                __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
            }
            #pragma omp barrier
            #pragma omp master
            elapsed = omp_get_wtime() - elapsed;
            sink += acc + a[n / 2] + b[n / 3];
            free(a); free(b); free(c); free(d);
        }
        if (elapsed >= min_s || reps > (1L << 40)) break;
        reps = (long)(reps * (elapsed > 0 ? 1.5 * min_s / elapsed : 10)) + 1;
    }
    printf("%d %.4f %g\n", threads, per_it * n * reps * threads / elapsed / 1e9, sink > 0 ? 0.0 : 1.0);
    return 0;
}
