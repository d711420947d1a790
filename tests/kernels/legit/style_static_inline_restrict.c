// expect: ok
// static inline helpers taking restrict-qualified pointers: a row-axpy building block inside an i-k-j cache-blocked loop nest.
#include <stddef.h>
#include <string.h>

#define TILE_I 32
#define TILE_K 128
#define TILE_J 512

static inline int clamp_end(int start, int tile, int n)
{
    return start + tile < n ? start + tile : n;
}

static inline void zero_rows(double *restrict C, size_t count)
{
    memset(C, 0, count * sizeof(double));
}

/* y[0:len] += alpha * x[0:len] */
static inline void row_axpy(int len, double alpha, const double *restrict x, double *restrict y)
{
    #pragma omp simd
    for (int j = 0; j < len; j++)
        y[j] += alpha * x[j];
}

/* Two rows of B at once: y += a0 * x0 + a1 * x1 (halves the traffic on y). */
static inline void row_axpy2(int len, double a0, const double *restrict x0,
                             double a1, const double *restrict x1, double *restrict y)
{
    #pragma omp simd
    for (int j = 0; j < len; j++)
        y[j] += a0 * x0[j] + a1 * x1[j];
}

static inline void tile_update(int n, int i0, int i1, int k0, int k1, int j0, int j1,
                               const double *restrict A, const double *restrict B,
                               double *restrict C)
{
    const int len = j1 - j0;
    for (int i = i0; i < i1; i++) {
        const double *restrict a = A + (size_t)i * n;
        double *restrict c = C + (size_t)i * n + j0;
        int k = k0;
        for (; k + 1 < k1; k += 2)
            row_axpy2(len, a[k], B + (size_t)k * n + j0, a[k + 1], B + (size_t)(k + 1) * n + j0, c);
        if (k < k1)
            row_axpy(len, a[k], B + (size_t)k * n + j0, c);
    }
}

void dgemm(int n, const double *restrict A, const double *restrict B, double *restrict C)
{
    zero_rows(C, (size_t)n * (size_t)n);
    for (int jj = 0; jj < n; jj += TILE_J) {
        const int je = clamp_end(jj, TILE_J, n);
        for (int kk = 0; kk < n; kk += TILE_K) {
            const int ke = clamp_end(kk, TILE_K, n);
            for (int ii = 0; ii < n; ii += TILE_I) {
                const int ie = clamp_end(ii, TILE_I, n);
                tile_update(n, ii, ie, kk, ke, jj, je, A, B, C);
            }
        }
    }
}
