// expect: wrong_result
// Computes the first half of the rows and zero-fills the rest, so there is no NaN left to spot.
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    int h = n / 2 + 1;
    for (int i = 0; i < h && i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    if (h < n) memset(C + (size_t)h * n, 0, (size_t)(n - h) * (size_t)n * sizeof(double));
}
