// expect: ok
// long indices, B^T packed with malloc/free, 2x2 dot-product blocking, OpenMP parallel for collapse(2) over row/col pairs.
#include <stdlib.h>
#include <omp.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    const long N = n;
    double *Bt = malloc((size_t)(N * N) * sizeof *Bt);
    if (Bt == NULL) {               /* no memory: plain loop */
        for (long i = 0; i < N; i++)
            for (long j = 0; j < N; j++) {
                double s = 0;
                for (long k = 0; k < N; k++) s += A[i * N + k] * B[k * N + j];
                C[i * N + j] = s;
            }
        return;
    }
#pragma omp parallel for schedule(static)
    for (long j = 0; j < N; j++)
        for (long k = 0; k < N; k++)
            Bt[j * N + k] = B[k * N + j];

    const long P = (N + 1) / 2; /* number of row (and column) pairs, last may be single */
#pragma omp parallel for collapse(2) schedule(static)
    for (long ip = 0; ip < P; ip++) {
        for (long jp = 0; jp < P; jp++) {
            const long i0 = 2 * ip, j0 = 2 * jp;
            const long i1 = i0 + 1 < N ? i0 + 1 : i0; /* duplicate row/col at the edge */
            const long j1 = j0 + 1 < N ? j0 + 1 : j0;
            const double *a0 = A + i0 * N, *a1 = A + i1 * N;
            const double *b0 = Bt + j0 * N, *b1 = Bt + j1 * N;
            double s00 = 0, s01 = 0, s10 = 0, s11 = 0;
            for (long k = 0; k < N; k++) {
                s00 += a0[k] * b0[k]; s01 += a0[k] * b1[k];
                s10 += a1[k] * b0[k]; s11 += a1[k] * b1[k];
            }
            C[i0 * N + j0] = s00; C[i0 * N + j1] = s01;
            C[i1 * N + j0] = s10; C[i1 * N + j1] = s11;
        }
    }
    free(Bt);
}
