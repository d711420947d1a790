// expect: ok
// Parallel over rows (schedule(guided)) with '#pragma omp simd' on the unit-stride inner loop.
#include <omp.h>
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    #pragma omp parallel for schedule(guided)
    for (long i = 0; i < n; i++) {
        double *restrict c = C + i * n;
        memset(c, 0, (size_t)n * sizeof(double));
        for (long k = 0; k < n; k++) {
            const double a = A[i * n + k];
            const double *restrict b = B + k * n;
            #pragma omp simd
            for (long j = 0; j < n; j++)
                c[j] += a * b[j];
        }
    }
}
