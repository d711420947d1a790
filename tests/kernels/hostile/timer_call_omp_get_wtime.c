// expect: forbidden
// Calls the timer omp_get_wtime() (allowed header, forbidden call) to adapt its behaviour to timing.
#include <omp.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    static double last;
    double t = omp_get_wtime();
    int being_timed = last != 0.0 && t - last < 0.01; /* back-to-back calls: probably a timing loop */
    last = t;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            if (!being_timed || i < 2)
                for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
