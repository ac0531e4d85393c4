/* The cost of one barrier event of the generated solver's step with the current OMP_NUM_THREADS.
 * Every kernel sweep of a step is a parallel region of its own, so each event is the end (the
 * join) of one region and the start (the fork) of the next: the benchmark times empty parallel
 * regions back to back.  On a 2-core guest that is about 3 x a `#pragma omp barrier` inside one
 * region (1.3 against 0.45 us), which is what it timed before.  Prints one JSON line (Extra-P
 * JSON Lines record, with min/median/max) per run; each repetition times `inner` regions.
 *   usage: barrier [reps] [inner]                                          */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile int sink[64 * 16];   /* one write per thread and region: the region is not empty */

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    int inner = argc > 2 ? atoi(argv[2]) : 2000;
    double *t = malloc(sizeof(double) * reps);
    int threads = omp_get_max_threads();
    for (int w = 0; w < inner; ++w) {  /* warm-up: the team is made, the threads spin */
        #pragma omp parallel
        sink[16 * (omp_get_thread_num() % 64)] = w;
    }
    for (int r = 0; r < reps; ++r) {
        double t0 = omp_get_wtime();
        for (int k = 0; k < inner; ++k) {
            #pragma omp parallel
            sink[16 * (omp_get_thread_num() % 64)] = k;
        }
        t[r] = (omp_get_wtime() - t0) / inner;
    }
    printf("{\"params\": {\"threads\": %d}, \"callpath\": \"barrier\", \"metric\": \"time\", \"value\": [", threads);
    for (int r = 0; r < reps; ++r) printf("%s%.9e", r ? ", " : "", t[r]);
    qsort(t, reps, sizeof(double), cmp);
    printf("], \"min\": %.9e, \"median\": %.9e, \"max\": %.9e, \"reps\": %d}\n", t[0], t[reps / 2], t[reps - 1], reps);
    free(t);
    return 0;
}
