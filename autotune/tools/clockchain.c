/* The clock a core runs at under load: a chain of dependent 64-bit integer adds (latency
 * 1 cycle on every x86 and ARM core in use), so adds per second are cycles per second.
 * OMP_NUM_THREADS threads run it at once, each on its own core (OMP_PROC_BIND, OMP_PLACES),
 * each timed by its own CPU time: time the OS gives the core to another task does not count.
 *
 * The chain is inline assembly: the compiler can neither break it nor reassociate it.  One
 * loop iteration is CHAIN adds; the loop's counter and branch depend on nothing in the chain
 * and issue beside it, so they cost no cycle of it.
 *   usage: clockchain MIN_SECONDS RUNS
 *   prints: one line per run, each thread's dependent adds per second in GHz              */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAIN 256
#define STR_(x) #x
#define STR(x) STR_(x)

#if defined(__x86_64__)
#define ADDS ".rept " STR(CHAIN) "\n\tadd %1, %0\n\t.endr"
#elif defined(__aarch64__)
#define ADDS ".rept " STR(CHAIN) "\n\tadd %0, %0, %1\n\t.endr"
#else
#error "clockchain: no chain of dependent adds written for this instruction set (x86-64, AArch64)"
#endif

static uint64_t chain(uint64_t x, uint64_t step, long iterations) {
    for (long i = 0; i < iterations; ++i)
        __asm__ volatile(ADDS : "+r"(x) : "r"(step));
    return x;
}

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: clockchain MIN_SECONDS RUNS\n"); return 2; }
    double min_s = atof(argv[1]);
    int runs = atoi(argv[2]);
    if (min_s <= 0 || runs < 1) { fprintf(stderr, "clockchain: expected MIN_SECONDS > 0 and RUNS >= 1\n"); return 2; }
    /* the iterations of one run: grown until a chain takes a quarter of MIN_SECONDS (which
       also gives the core time to reach its clock under load), then scaled to MIN_SECONDS */
    long iterations = 1000;
    uint64_t x = 0;
    for (;;) {
        double t0 = wall_seconds();
        x = chain(x, 1, iterations);
        double dt = wall_seconds() - t0;
        if (dt >= min_s / 4) { iterations = (long)(iterations * min_s / dt) + 1; break; }
        iterations *= 4;
    }
    int threads = omp_get_max_threads();
    double *ghz = calloc((size_t)runs * threads, sizeof *ghz);
    #pragma omp parallel
    {
        int t = omp_get_thread_num();
        uint64_t y = chain(x + t, 1, iterations / 4);   /* every core under load before the first run */
        for (int r = 0; r < runs; ++r) {
            #pragma omp barrier
            double t0 = cpu_seconds();
            y = chain(y, 1, iterations);
            double dt = cpu_seconds() - t0;
            ghz[(size_t)r * threads + t] = dt > 0 ? (double)iterations * CHAIN / dt / 1e9 : 0.0;
        }
    }
    for (int r = 0; r < runs; ++r) {
        for (int t = 0; t < threads; ++t) printf(t ? " %.4f" : "%.4f", ghz[(size_t)r * threads + t]);
        printf("\n");
    }
    free(ghz);
    return 0;
}
