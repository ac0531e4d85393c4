/* OpenMP thread-barrier cost: seconds per `#pragma omp barrier` with the
 * current OMP_NUM_THREADS.  Prints one JSON line (Extra-P JSON Lines record,
 * with min/median/max) per run; each repetition times `inner` barriers.
 *   usage: barrier [reps] [inner]                                          */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    int inner = argc > 2 ? atoi(argv[2]) : 2000;
    double *t = malloc(sizeof(double) * reps);
    int threads = 1;
    #pragma omp parallel
    {
        #pragma omp single
        threads = omp_get_num_threads();
        for (int w = 0; w < inner; ++w) {  /* warm-up */
            #pragma omp barrier
        }
        for (int r = 0; r < reps; ++r) {
            #pragma omp barrier
            double t0 = omp_get_wtime();
            for (int k = 0; k < inner; ++k) {
                #pragma omp barrier
            }
            #pragma omp master
            t[r] = (omp_get_wtime() - t0) / inner;
        }
    }
    printf("{\"params\": {\"threads\": %d}, \"callpath\": \"barrier\", \"metric\": \"time\", \"value\": [", threads);
    for (int r = 0; r < reps; ++r) printf("%s%.9e", r ? ", " : "", t[r]);
    qsort(t, reps, sizeof(double), cmp);
    printf("], \"min\": %.9e, \"median\": %.9e, \"max\": %.9e, \"reps\": %d}\n", t[0], t[reps / 2], t[reps - 1], reps);
    free(t);
    return 0;
}
