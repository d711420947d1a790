// expect: ok
// Packs B^T into an aligned_alloc'ed buffer (static helper), row-dot-row with omp simd reduction, frees it.
#include <stdlib.h>
#include <string.h>

static void transpose_into(int n, const double *B, double *BT)
{
    const int T = 24; /* tile for the transpose; need not divide n */
    for (int kk = 0; kk < n; kk += T)
        for (int jj = 0; jj < n; jj += T)
            for (int k = kk; k < n && k < kk + T; k++)
                for (int j = jj; j < n && j < jj + T; j++)
                    BT[(size_t)j * n + k] = B[(size_t)k * n + j];
}

static void naive_fallback(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    bytes = (bytes + 63) & ~(size_t)63; /* aligned_alloc wants a multiple of the alignment */
    double *BT = aligned_alloc(64, bytes);
    if (!BT) { naive_fallback(n, A, B, C); return; }
    transpose_into(n, B, BT);

#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        const double *a = A + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            const double *bt = BT + (size_t)j * n;
            double s = 0.0;
#pragma omp simd reduction(+:s)
            for (int k = 0; k < n; k++) s += a[k] * bt[k];
            C[(size_t)i * n + j] = s;
        }
    }
    free(BT);
}
