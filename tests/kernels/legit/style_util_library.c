// expect: ok
// "Utility library" style: exported generic helpers (min_int, matrix_zero, matrix_transpose, block_multiply) and exported global constants.
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

const int BLOCK_SIZE = 64;
const int UNROLL_FACTOR = 4;
double scale_factor = 1.0;

int min_int(int a, int b)
{
    return a < b ? a : b;
}

int max_int(int a, int b)
{
    return a > b ? a : b;
}

size_t matrix_offset(int row, int col, int ld)
{
    return (size_t)row * (size_t)ld + (size_t)col;
}

void matrix_zero(double *M, int rows, int cols)
{
    memset(M, 0, sizeof(double) * (size_t)rows * (size_t)cols);
}

void matrix_transpose(const double *src, double *dst, int n)
{
    for (int ib = 0; ib < n; ib += BLOCK_SIZE) {
        int ie = min_int(ib + BLOCK_SIZE, n);
        for (int jb = 0; jb < n; jb += BLOCK_SIZE) {
            int je = min_int(jb + BLOCK_SIZE, n);
            for (int i = ib; i < ie; i++)
                for (int j = jb; j < je; j++)
                    dst[matrix_offset(j, i, n)] = src[matrix_offset(i, j, n)];
        }
    }
}

double vector_dot(const double *x, const double *y, int len)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int k = 0;
    for (; k + UNROLL_FACTOR <= len; k += UNROLL_FACTOR) {
        s0 += x[k] * y[k];
        s1 += x[k + 1] * y[k + 1];
        s2 += x[k + 2] * y[k + 2];
        s3 += x[k + 3] * y[k + 3];
    }
    for (; k < len; k++)
        s0 += x[k] * y[k];
    return (s0 + s1) + (s2 + s3);
}

/* C[i0:i1, j0:j1] += A[i0:i1, k0:k1] * Bt[j0:j1, k0:k1]^T  (Bt is B transposed) */
void block_multiply(const double *A, const double *Bt, double *C, int n,
                    int i0, int i1, int j0, int j1, int k0, int k1)
{
    for (int i = i0; i < i1; i++) {
        const double *arow = A + matrix_offset(i, k0, n);
        for (int j = j0; j < j1; j++) {
            const double *brow = Bt + matrix_offset(j, k0, n);
            C[matrix_offset(i, j, n)] += scale_factor * vector_dot(arow, brow, k1 - k0);
        }
    }
}

void matrix_multiply(int n, const double *A, const double *B, double *C)
{
    double *Bt = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (Bt == NULL)
        return;
    matrix_transpose(B, Bt, n);
    matrix_zero(C, n, n);

    int bs = max_int(BLOCK_SIZE, 1);
    for (int ii = 0; ii < n; ii += bs)
        for (int kk = 0; kk < n; kk += bs)
            for (int jj = 0; jj < n; jj += bs)
                block_multiply(A, Bt, C, n,
                               ii, min_int(ii + bs, n),
                               jj, min_int(jj + bs, n),
                               kk, min_int(kk + bs, n));
    free(Bt);
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    matrix_multiply(n, A, B, C);
}
