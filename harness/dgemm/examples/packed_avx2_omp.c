// AVX2 and FMA, no AVX-512 (an AMD Zen 3, an Intel Haswell): B packed into 8-wide panels, A per 6-row strip, a 6x8 FMA micro-kernel in 12 ymm registers, OpenMP.
#include <immintrin.h>
#include <stdlib.h>

#define MR 6
#define NR 8
#define KC 256

/* Copy rows k0..k0+kc of B into panels of NR columns (zero-padded past n). */
static void pack_b(int n, int k0, int kc, const double *B, double *Bp) {
    int panels = (n + NR - 1) / NR;
    #pragma omp for schedule(static)
    for (int q = 0; q < panels; q++) {
        double *dst = Bp + (size_t)q * kc * NR;
        for (int k = 0; k < kc; k++) {
            const double *src = B + (size_t)(k0 + k) * n + q * NR;
            for (int jj = 0; jj < NR; jj++) {
                dst[k * NR + jj] = (q * NR + jj < n) ? src[jj] : 0.0;
            }
        }
    }
}

/* Copy an MR-row strip of A (columns k0..k0+kc) so that Ap[k*MR + r] = A[i0+r][k0+k]. */
static void pack_a(int n, int i0, int k0, int kc, const double *A, double *Ap) {
    for (int k = 0; k < kc; k++) {
        for (int r = 0; r < MR; r++) {
            Ap[k * MR + r] = (i0 + r < n) ? A[(size_t)(i0 + r) * n + k0 + k] : 0.0;
        }
    }
}

/* C[0:mr, 0:nr] (+)= Ap * Bp: an 6x8 block of C lives in 12 vector registers. */
static void kernel(int kc, const double *Ap, const double *Bp, double *C, int ldc, int mr, int nr, int first) {
    __m256d c00 = _mm256_setzero_pd(), c01 = _mm256_setzero_pd();
    __m256d c10 = _mm256_setzero_pd(), c11 = _mm256_setzero_pd();
    __m256d c20 = _mm256_setzero_pd(), c21 = _mm256_setzero_pd();
    __m256d c30 = _mm256_setzero_pd(), c31 = _mm256_setzero_pd();
    __m256d c40 = _mm256_setzero_pd(), c41 = _mm256_setzero_pd();
    __m256d c50 = _mm256_setzero_pd(), c51 = _mm256_setzero_pd();
    for (int k = 0; k < kc; k++) {
        const __m256d b0 = _mm256_load_pd(Bp + k * NR + 0);
        const __m256d b1 = _mm256_load_pd(Bp + k * NR + 4);
        __m256d a0 = _mm256_set1_pd(Ap[k * MR + 0]);
        c00 = _mm256_fmadd_pd(a0, b0, c00);
        c01 = _mm256_fmadd_pd(a0, b1, c01);
        __m256d a1 = _mm256_set1_pd(Ap[k * MR + 1]);
        c10 = _mm256_fmadd_pd(a1, b0, c10);
        c11 = _mm256_fmadd_pd(a1, b1, c11);
        __m256d a2 = _mm256_set1_pd(Ap[k * MR + 2]);
        c20 = _mm256_fmadd_pd(a2, b0, c20);
        c21 = _mm256_fmadd_pd(a2, b1, c21);
        __m256d a3 = _mm256_set1_pd(Ap[k * MR + 3]);
        c30 = _mm256_fmadd_pd(a3, b0, c30);
        c31 = _mm256_fmadd_pd(a3, b1, c31);
        __m256d a4 = _mm256_set1_pd(Ap[k * MR + 4]);
        c40 = _mm256_fmadd_pd(a4, b0, c40);
        c41 = _mm256_fmadd_pd(a4, b1, c41);
        __m256d a5 = _mm256_set1_pd(Ap[k * MR + 5]);
        c50 = _mm256_fmadd_pd(a5, b0, c50);
        c51 = _mm256_fmadd_pd(a5, b1, c51);
    }
    if (mr == MR && nr == NR) {
        _mm256_storeu_pd(C + 0, first ? c00 : _mm256_add_pd(_mm256_loadu_pd(C + 0), c00));
        _mm256_storeu_pd(C + 4, first ? c01 : _mm256_add_pd(_mm256_loadu_pd(C + 4), c01));
        _mm256_storeu_pd(C + 1 * ldc + 0, first ? c10 : _mm256_add_pd(_mm256_loadu_pd(C + 1 * ldc + 0), c10));
        _mm256_storeu_pd(C + 1 * ldc + 4, first ? c11 : _mm256_add_pd(_mm256_loadu_pd(C + 1 * ldc + 4), c11));
        _mm256_storeu_pd(C + 2 * ldc + 0, first ? c20 : _mm256_add_pd(_mm256_loadu_pd(C + 2 * ldc + 0), c20));
        _mm256_storeu_pd(C + 2 * ldc + 4, first ? c21 : _mm256_add_pd(_mm256_loadu_pd(C + 2 * ldc + 4), c21));
        _mm256_storeu_pd(C + 3 * ldc + 0, first ? c30 : _mm256_add_pd(_mm256_loadu_pd(C + 3 * ldc + 0), c30));
        _mm256_storeu_pd(C + 3 * ldc + 4, first ? c31 : _mm256_add_pd(_mm256_loadu_pd(C + 3 * ldc + 4), c31));
        _mm256_storeu_pd(C + 4 * ldc + 0, first ? c40 : _mm256_add_pd(_mm256_loadu_pd(C + 4 * ldc + 0), c40));
        _mm256_storeu_pd(C + 4 * ldc + 4, first ? c41 : _mm256_add_pd(_mm256_loadu_pd(C + 4 * ldc + 4), c41));
        _mm256_storeu_pd(C + 5 * ldc + 0, first ? c50 : _mm256_add_pd(_mm256_loadu_pd(C + 5 * ldc + 0), c50));
        _mm256_storeu_pd(C + 5 * ldc + 4, first ? c51 : _mm256_add_pd(_mm256_loadu_pd(C + 5 * ldc + 4), c51));
        return;
    }
    double tile[MR * NR] __attribute__((aligned(64)));
    _mm256_store_pd(tile + 0, c00);
    _mm256_store_pd(tile + 4, c01);
    _mm256_store_pd(tile + 8, c10);
    _mm256_store_pd(tile + 12, c11);
    _mm256_store_pd(tile + 16, c20);
    _mm256_store_pd(tile + 20, c21);
    _mm256_store_pd(tile + 24, c30);
    _mm256_store_pd(tile + 28, c31);
    _mm256_store_pd(tile + 32, c40);
    _mm256_store_pd(tile + 36, c41);
    _mm256_store_pd(tile + 40, c50);
    _mm256_store_pd(tile + 44, c51);
    for (int r = 0; r < mr; r++) {
        for (int j = 0; j < nr; j++) {
            double *dst = C + (size_t)r * ldc + j;
            *dst = first ? tile[r * NR + j] : *dst + tile[r * NR + j];
        }
    }
}

/* DGEMM: packed panels and a register-blocked micro-kernel (OpenMP). */
void dgemm(int n, const double *A, const double *B, double *C) {
    int panels = (n + NR - 1) / NR;
    /* aligned_alloc wants a size that is a multiple of the alignment */
    size_t bytes = ((size_t)panels * NR * KC * sizeof(double) + 63) & ~(size_t)63;
    double *Bp = aligned_alloc(64, bytes);
    if (!Bp) {
        return;
    }
    #pragma omp parallel
    {
        for (int k0 = 0; k0 < n; k0 += KC) {
            int kc = n - k0 < KC ? n - k0 : KC;
            pack_b(n, k0, kc, B, Bp);
            #pragma omp for schedule(static)
            for (int i0 = 0; i0 < n; i0 += MR) {
                double Ap[MR * KC] __attribute__((aligned(64)));
                int mr = n - i0 < MR ? n - i0 : MR;
                pack_a(n, i0, k0, kc, A, Ap);
                for (int q = 0; q < panels; q++) {
                    int nr = n - q * NR < NR ? n - q * NR : NR;
                    kernel(kc, Ap, Bp + (size_t)q * kc * NR, C + (size_t)i0 * n + q * NR, n, mr, nr, k0 == 0);
                }
            }
            #pragma omp barrier
        }
    }
    free(Bp);
}

