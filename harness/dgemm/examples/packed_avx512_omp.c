// Fast path: B packed into 16-wide panels (aligned_alloc), A packed per 8-row strip, 8x16 AVX-512 FMA micro-kernel, OpenMP, masked edges.
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#define MR 8    /* rows of C per micro-tile            */
#define NR 16   /* columns of C per micro-tile (2 zmm) */
#define KC 256  /* depth of one packed block of k      */

/* Pack rows k0..k0+kc-1 of B into column panels of NR doubles, zero padded past n. */
static void pack_b_panel(int n, int k0, int kc, int j0, const double *B, double *dst)
{
    const int nr = n - j0 < NR ? n - j0 : NR;
    for (int p = 0; p < kc; p++) {
        const double *src = B + (size_t)(k0 + p) * n + j0;
        double *d = dst + (size_t)p * NR;
        if (nr == NR) {
            _mm512_store_pd(d, _mm512_loadu_pd(src));
            _mm512_store_pd(d + 8, _mm512_loadu_pd(src + 8));
        } else {
            int j = 0;
            for (; j < nr; j++) d[j] = src[j];
            for (; j < NR; j++) d[j] = 0.0;
        }
    }
}

/* Pack an MR x kc strip of A as kc groups of MR values (k-major), zero padded past n. */
static void pack_a_strip(int n, int i0, int k0, int kc, const double *A, double *dst)
{
    const int mr = n - i0 < MR ? n - i0 : MR;
    for (int r = 0; r < MR; r++) {
        if (r < mr) {
            const double *src = A + (size_t)(i0 + r) * n + k0;
            for (int p = 0; p < kc; p++) dst[(size_t)p * MR + r] = src[p];
        } else {
            for (int p = 0; p < kc; p++) dst[(size_t)p * MR + r] = 0.0;
        }
    }
}

static inline void store_row(double *c, __m512d lo, __m512d hi, __mmask8 m0, __mmask8 m1, int accumulate)
{
    if (accumulate) {
        lo = _mm512_add_pd(lo, _mm512_maskz_loadu_pd(m0, c));
        hi = _mm512_add_pd(hi, _mm512_maskz_loadu_pd(m1, c + 8));
    }
    _mm512_mask_storeu_pd(c, m0, lo);
    _mm512_mask_storeu_pd(c + 8, m1, hi);
}

/* C[0:mr, 0:nr] (+)= Ap * Bp over kc; the padded zeros make the full 8x16 compute safe. */
static inline void micro_8x16(int kc, const double *restrict Ap, const double *restrict Bp,
                              double *C, int ldc, int mr, int nr, int accumulate)
{
    __m512d c00 = _mm512_setzero_pd(), c01 = _mm512_setzero_pd();
    __m512d c10 = _mm512_setzero_pd(), c11 = _mm512_setzero_pd();
    __m512d c20 = _mm512_setzero_pd(), c21 = _mm512_setzero_pd();
    __m512d c30 = _mm512_setzero_pd(), c31 = _mm512_setzero_pd();
    __m512d c40 = _mm512_setzero_pd(), c41 = _mm512_setzero_pd();
    __m512d c50 = _mm512_setzero_pd(), c51 = _mm512_setzero_pd();
    __m512d c60 = _mm512_setzero_pd(), c61 = _mm512_setzero_pd();
    __m512d c70 = _mm512_setzero_pd(), c71 = _mm512_setzero_pd();

    for (int p = 0; p < kc; p++) {
        const __m512d b0 = _mm512_load_pd(Bp + (size_t)p * NR);
        const __m512d b1 = _mm512_load_pd(Bp + (size_t)p * NR + 8);
        const double *a = Ap + (size_t)p * MR;
        __m512d av;
#define STEP(r) av = _mm512_set1_pd(a[r]); \
                c##r##0 = _mm512_fmadd_pd(av, b0, c##r##0); \
                c##r##1 = _mm512_fmadd_pd(av, b1, c##r##1);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
#undef STEP
    }

    const __mmask8 m0 = nr >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << nr) - 1u);
    const __mmask8 m1 = nr >= 16 ? (__mmask8)0xFF : (nr > 8 ? (__mmask8)((1u << (nr - 8)) - 1u) : (__mmask8)0);
#define OUT(r) if (r < mr) store_row(C + (size_t)r * ldc, c##r##0, c##r##1, m0, m1, accumulate);
    OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5) OUT(6) OUT(7)
#undef OUT
}

static void plain_dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(size_t)i * n + k];
            const double *b = B + (size_t)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    const int kcmax = n < KC ? n : KC;
    const int npanels = (n + NR - 1) / NR;
    const int nstrips = (n + MR - 1) / MR;
    double *Bp = aligned_alloc(64, (size_t)kcmax * (size_t)npanels * NR * sizeof(double));
    if (!Bp) { plain_dgemm(n, A, B, C); return; }

#pragma omp parallel
    {
        double Ap[KC * MR] __attribute__((aligned(64)));
        for (int k0 = 0; k0 < n; k0 += KC) {
            const int kc = n - k0 < KC ? n - k0 : KC;
            const int accumulate = k0 > 0; /* first block overwrites the garbage in C */

#pragma omp for schedule(static)
            for (int p = 0; p < npanels; p++)
                pack_b_panel(n, k0, kc, p * NR, B, Bp + (size_t)p * kc * NR);
            /* implicit barrier: Bp complete */

#pragma omp for schedule(dynamic, 2)
            for (int s = 0; s < nstrips; s++) {
                const int i0 = s * MR;
                const int mr = n - i0 < MR ? n - i0 : MR;
                pack_a_strip(n, i0, k0, kc, A, Ap);
                for (int p = 0; p < npanels; p++) {
                    const int j0 = p * NR;
                    const int nr = n - j0 < NR ? n - j0 : NR;
                    micro_8x16(kc, Ap, Bp + (size_t)p * kc * NR, C + (size_t)i0 * n + j0, n, mr, nr,
                               accumulate);
                }
            }
            /* implicit barrier: nobody repacks Bp while it is still being read */
        }
    }
    free(Bp);
}
