// expect: ok threads: 2
// A DGEMM laid out like a library source file: a doc comment, a trailing comment on every #include, block and line comments everywhere, helpers and macros, an #ifdef __AVX512F__ / #elif defined(__AVX2__) / #else fallback picked by the compiler's own macros, and OpenMP over row blocks accumulated in an aligned per-thread buffer.
/**
 * dgemm.c -- C = A * B for square, row-major matrices of doubles.
 *
 * Layout:   every matrix is n x n, element (i, j) at [i * n + j].
 * Strategy: i-k-j order inside (row block, k panel) tiles; the innermost
 *           j loop is vectorized by hand with the widest ISA the compiler
 *           was told about (-march=native), with a scalar tail and a
 *           portable fallback for everything else.
 */
#include <stddef.h>    /* size_t */
#include <stdlib.h>    // aligned_alloc, free
#include <string.h>    // memcpy, memset
#include <immintrin.h> // AVX-512 / AVX2 intrinsics
#include <omp.h>       /* OpenMP: one row block per iteration */

/* ---- tuning knobs ------------------------------------------------------ */
#define BLOCK_I 32          /* rows of C computed together */
#define BLOCK_K 128         // depth of one k panel (a slice of B stays in cache)
#define ALIGNMENT 64        /* one cache line, one zmm register */
#define MIN(a, b) ((a) < (b) ? (a) : (b))                       /* the usual */
#define IDX(i, j, ld) ((size_t)(i) * (size_t)(ld) + (size_t)(j)) // row-major index

/** Round `bytes` up to a multiple of ALIGNMENT (aligned_alloc wants one). */
static size_t round_up(size_t bytes)
{
    return (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
}

/**
 * c[0:len] += a * b[0:len].
 *
 * @param len  number of doubles in the row
 * @param a    the scalar A(i, k)
 * @param b    row k of B
 * @param c    the accumulator row of C(i, :)
 */
static inline void axpy_row(int len, double a, const double *restrict b, double *restrict c)
{
    int j = 0;
#ifdef __AVX512F__
    const __m512d va = _mm512_set1_pd(a); /* broadcast A(i, k) */
    for (; j + 8 <= len; j += 8)          // 8 doubles per zmm
        _mm512_storeu_pd(c + j, _mm512_fmadd_pd(va, _mm512_loadu_pd(b + j), _mm512_loadu_pd(c + j)));
#elif defined(__AVX2__)
    const __m256d va = _mm256_set1_pd(a); /* broadcast A(i, k) */
    for (; j + 4 <= len; j += 4) {        // 4 doubles per ymm
        __m256d prod = _mm256_mul_pd(va, _mm256_loadu_pd(b + j));
        _mm256_storeu_pd(c + j, _mm256_add_pd(prod, _mm256_loadu_pd(c + j)));
    }
#else
    /* No vector ISA announced: the scalar loop below does all of it. */
#endif
    for (; j < len; j++) /* the tail (or the whole row without SIMD) */
        c[j] += a * b[j];
}

/* One tile: rows [i0, i1) of C (in acc, ld = n) += A[i0:i1, k0:k1] * B[k0:k1, :]. */
static void tile(int n, int i0, int i1, int k0, int k1, const double *A, const double *B, double *acc)
{
    for (int i = i0; i < i1; i++)
        for (int k = k0; k < k1; k++) // i-k-j: B and acc are read row by row
            axpy_row(n, A[IDX(i, k, n)], &B[IDX(k, 0, n)], &acc[IDX(i - i0, 0, n)]);
}

/* The required entry point. C is output only: nothing is assumed about what it holds. */
void dgemm(int n, const double *A, const double *B, double *C)
{
    /*
     * Each thread owns one aligned accumulator of BLOCK_I rows; a block's
     * result is copied into C once all k panels have been added.
     */
#pragma omp parallel // one team for all the row blocks
    {
        double *acc = aligned_alloc(ALIGNMENT, round_up(sizeof(double) * BLOCK_I * (size_t)n)); // per thread
#pragma omp for schedule(static) /* row blocks are independent */
        for (int i0 = 0; i0 < n; i0 += BLOCK_I) {
            const int i1 = MIN(i0 + BLOCK_I, n);
            double *out = acc ? acc : &C[IDX(i0, 0, n)]; // no buffer: accumulate in place
            memset(out, 0, sizeof(double) * (size_t)(i1 - i0) * (size_t)n);
            for (int k0 = 0; k0 < n; k0 += BLOCK_K) /* k panels */
                tile(n, i0, i1, k0, MIN(k0 + BLOCK_K, n), A, B, out);
            if (acc) // copy the finished rows out
                memcpy(&C[IDX(i0, 0, n)], acc, sizeof(double) * (size_t)(i1 - i0) * (size_t)n);
        }
        free(acc); /* free(NULL) is fine */
    }
}
