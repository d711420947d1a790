// expect: ok problem: dot threads: 2 n: 100000
// OpenMP by hand: each thread sums its own block into a padded slot of a partials array (no false sharing), and one thread adds the slots.
#include <omp.h>

double dot(int n, const double *x, const double *y)
{
    double partial[64][8] = {{0}};
    int nt = 1;
#pragma omp parallel
    {
        int t = omp_get_thread_num();
#pragma omp single
        nt = omp_get_num_threads();
        double s = 0.0;
#pragma omp for schedule(static)
        for (int i = 0; i < n; i++)
            s += x[i] * y[i];
        partial[t][0] = s;
    }
    double total = 0.0;
    for (int t = 0; t < nt && t < 64; t++)
        total += partial[t][0];
    return total;
}
