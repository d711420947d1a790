// expect: ok
// Netlib/Fortran port style: 1-based loop indices, column-major thinking via C^T = B^T A^T, ALL-CAPS exported helpers, goto-free jki loops.
#include <stddef.h>

/* Row-major C = A*B is column-major C' = B' * A', where X' is stored exactly as X. */

const double ZERO = 0.0;
const double ONE = 1.0;

/* Column-major DGEMM_NN kernel, C := alpha*X*Y + beta*C, written like the reference:
 * X is M x K, Y is K x N, all column-major with leading dimensions. */
void DGEMM_NN_KERNEL(int M, int N, int K, double ALPHA, const double *X, int LDX,
                     const double *Y, int LDY, double BETA, double *Z, int LDZ)
{
    for (int J = 1; J <= N; J++) {
        double *zcol = Z + (size_t)(J - 1) * LDZ;
        if (BETA == ZERO) {
            for (int I = 1; I <= M; I++)
                zcol[I - 1] = ZERO;
        } else if (BETA != ONE) {
            for (int I = 1; I <= M; I++)
                zcol[I - 1] *= BETA;
        }
        for (int L = 1; L <= K; L++) {
            double TEMP = ALPHA * Y[(size_t)(L - 1) + (size_t)(J - 1) * LDY];
            const double *xcol = X + (size_t)(L - 1) * LDX;
            for (int I = 1; I <= M; I++)
                zcol[I - 1] += TEMP * xcol[I - 1];
        }
    }
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    /* column-major view: C' (n x n, ld n) = B' (X) * A' (Y) */
    DGEMM_NN_KERNEL(n, n, n, ONE, B, n, A, n, ZERO, C, n);
}
