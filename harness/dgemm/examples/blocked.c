// Cache-blocked ikj with odd tile sizes (48x40x56) that do not divide n; size_t indices.
#include <stddef.h>
#include <string.h>

#define BI 48
#define BK 40
#define BJ 56

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

void dgemm(int n, const double *A, const double *B, double *C)
{
    const size_t N = (size_t)n;
    memset(C, 0, N * N * sizeof(double));

    for (size_t ii = 0; ii < N; ii += BI) {
        const size_t ie = min_sz(ii + BI, N);
        for (size_t kk = 0; kk < N; kk += BK) {
            const size_t ke = min_sz(kk + BK, N);
            for (size_t jj = 0; jj < N; jj += BJ) {
                const size_t je = min_sz(jj + BJ, N);
                for (size_t i = ii; i < ie; i++) {
                    double *c = C + i * N;
                    for (size_t k = kk; k < ke; k++) {
                        const double a = A[i * N + k];
                        const double *b = B + k * N;
                        for (size_t j = jj; j < je; j++)
                            c[j] += a * b[j];
                    }
                }
            }
        }
    }
}
