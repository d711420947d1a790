// expect: forbidden
// Includes the harness's own header by relative path to reach its static reference/baseline code.
#include "../../harness/bench.h"

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
