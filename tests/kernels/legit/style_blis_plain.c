// expect: ok
// BLIS-style teaching implementation in plain C: exported pack_A/pack_B, macro-kernel and micro-kernel, wrapped by a three-line dgemm.
#include <stdlib.h>
#include <string.h>

#define MC 96
#define KC 256
#define NC 2048
#define MR 4
#define NR 8

/* Pack an mc x kc block of A (row-major, leading dimension lda) into
 * row panels of MR rows, stored k-major: buf[p][k][i]. Rows past mc are zero. */
void pack_A(int mc, int kc, const double *A, int lda, double *buf)
{
    for (int p = 0; p < mc; p += MR) {
        int rows = mc - p < MR ? mc - p : MR;
        for (int k = 0; k < kc; k++) {
            for (int i = 0; i < rows; i++)
                buf[i] = A[(size_t)(p + i) * lda + k];
            for (int i = rows; i < MR; i++)
                buf[i] = 0.0;
            buf += MR;
        }
    }
}

/* Pack a kc x nc block of B into column panels of NR columns: buf[p][k][j]. */
void pack_B(int kc, int nc, const double *B, int ldb, double *buf)
{
    for (int p = 0; p < nc; p += NR) {
        int cols = nc - p < NR ? nc - p : NR;
        for (int k = 0; k < kc; k++) {
            const double *brow = B + (size_t)k * ldb + p;
            for (int j = 0; j < cols; j++)
                buf[j] = brow[j];
            for (int j = cols; j < NR; j++)
                buf[j] = 0.0;
            buf += NR;
        }
    }
}

/* C[0:mr, 0:nr] += Apanel * Bpanel over kc. */
void micro_kernel(int kc, const double *a, const double *b, double *C, int ldc, int mr, int nr)
{
    double ab[MR][NR];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++)
            ab[i][j] = 0.0;

    for (int k = 0; k < kc; k++) {
        for (int i = 0; i < MR; i++) {
            double aik = a[i];
            for (int j = 0; j < NR; j++)
                ab[i][j] += aik * b[j];
        }
        a += MR;
        b += NR;
    }

    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            C[(size_t)i * ldc + j] += ab[i][j];
}

void macro_kernel(int mc, int nc, int kc, const double *Ap, const double *Bp, double *C, int ldc)
{
    for (int jr = 0; jr < nc; jr += NR) {
        int nr = nc - jr < NR ? nc - jr : NR;
        for (int ir = 0; ir < mc; ir += MR) {
            int mr = mc - ir < MR ? mc - ir : MR;
            micro_kernel(kc, Ap + (size_t)ir * kc, Bp + (size_t)jr * kc,
                         C + (size_t)ir * ldc + jr, ldc, mr, nr);
        }
    }
}

void gemm_blocked(int m, int n, int k, const double *A, int lda,
                  const double *B, int ldb, double *C, int ldc)
{
    double *Ap = malloc(sizeof(double) * (size_t)(MC + MR) * KC);
    double *Bp = malloc(sizeof(double) * (size_t)KC * (NC + NR));
    if (!Ap || !Bp) {
        free(Ap);
        free(Bp);
        return;
    }

    for (int i = 0; i < m; i++)
        memset(C + (size_t)i * ldc, 0, sizeof(double) * (size_t)n);

    for (int jc = 0; jc < n; jc += NC) {
        int nc = n - jc < NC ? n - jc : NC;
        for (int pc = 0; pc < k; pc += KC) {
            int kc = k - pc < KC ? k - pc : KC;
            pack_B(kc, nc, B + (size_t)pc * ldb + jc, ldb, Bp);
            for (int ic = 0; ic < m; ic += MC) {
                int mc = m - ic < MC ? m - ic : MC;
                pack_A(mc, kc, A + (size_t)ic * lda + pc, lda, Ap);
                macro_kernel(mc, nc, kc, Ap, Bp, C + (size_t)ic * ldc + jc, ldc);
            }
        }
    }

    free(Ap);
    free(Bp);
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    gemm_blocked(n, n, n, A, n, B, n, C, n);
}
