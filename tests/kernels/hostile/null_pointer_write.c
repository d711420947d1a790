// expect: runtime_error
// Writes through a NULL pointer (volatile so the compiler keeps it) -> SIGSEGV.
#include <stddef.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    volatile double *volatile target = NULL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    *target = C[0];
}
