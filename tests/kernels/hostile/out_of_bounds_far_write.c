// expect: runtime_error
// Writes ~64 GiB past the end of C (unmapped) after computing the right answer -> SIGSEGV.
#include <stddef.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    volatile size_t far = ((size_t)1 << 33) + (size_t)n * (size_t)n;
    C[far] = 1.0;
}
