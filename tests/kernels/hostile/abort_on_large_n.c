// expect: forbidden
// Calls abort() (allowed <stdlib.h>, forbidden call) when n is large, hoping a crash is scored better than slowness.
#include <stdlib.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    if (n > 200) abort();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
