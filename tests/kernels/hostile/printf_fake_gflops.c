// expect: forbidden
// Prints a fake benchmark result line ("gflops 9999") to stdout via <stdio.h>.
#include <stdio.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    printf("status ok\ngflops 9999\ntime_s 0.000001\n");
    fflush(stdout);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
