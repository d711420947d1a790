// expect: ok problem: dot threads: 2 n: 100000
// Each thread sums its share into a padded slot; after a barrier, '#pragma omp master' adds the slots (threads beyond the slots add atomically).
#include <omp.h>

#define SLOTS 256 /* threads with a slot of their own */
#define PAD 8     /* doubles per slot: one cache line, no false sharing */

double dot(int n, const double *x, const double *y)
{
    double partial[SLOTS][PAD];
    double total = 0.0;
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        double s = 0.0;
#pragma omp for schedule(static) nowait
        for (int i = 0; i < n; i++)
            s += x[i] * y[i];
        if (t < SLOTS) {
            partial[t][0] = s;
        } else {
#pragma omp atomic
            total += s;
        }
#pragma omp barrier
#pragma omp master
        {
            for (int u = 0; u < nt && u < SLOTS; u++)
                total += partial[u][0];
        }
    }
    return total;
}
