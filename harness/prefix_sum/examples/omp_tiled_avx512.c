// OpenMP + AVX-512, cache-tiled two-pass scan: the array is taken in tiles that fit the shared
// L3 cache; per tile each thread sums its share (x into cache), one barrier, then scans its share
// from cache with its offset, so x comes from memory once (a plain two-pass scan reads it twice);
// y is written with non-temporal stores.
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>

#define SHARE 262144 /* elements per thread and tile: 2 MiB of x, a tile well inside L3 */
#define MAX_THREADS 256

static inline __m512i scan8(__m512i v)
{
    const __m512i z = _mm512_setzero_si512();
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 7));
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 6));
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 4));
    return v;
}

static int64_t sum_range(const int64_t *x, long lo, long hi)
{
    __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
    long i = lo;
    for (; i + 16 <= hi; i += 16) {
        a = _mm512_add_epi64(a, _mm512_loadu_si512(x + i));
        b = _mm512_add_epi64(b, _mm512_loadu_si512(x + i + 8));
    }
    for (; i < hi; i += 8) {
        __mmask8 m = hi - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (hi - i)) - 1u);
        a = _mm512_add_epi64(a, _mm512_maskz_loadu_epi64(m, x + i));
    }
    return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}

/* y[lo..hi) = offset + scan of x[lo..hi): scalar until y is 64-byte aligned, then non-temporal
 * stores (no read-for-ownership of y's lines), masked tail. */
static void scan_range(const int64_t *x, int64_t *y, long lo, long hi, int64_t offset)
{
    long i = lo;
    for (; i < hi && ((uintptr_t)(y + i) & 63) != 0; i++) {
        offset += x[i];
        y[i] = offset;
    }
    const __m512i last = _mm512_set1_epi64(7);
    __m512i carry = _mm512_set1_epi64(offset);
    for (; i + 16 <= hi; i += 16) {
        __m512i a = _mm512_add_epi64(scan8(_mm512_loadu_si512(x + i)), carry);
        __m512i b = scan8(_mm512_loadu_si512(x + i + 8));
        b = _mm512_add_epi64(b, _mm512_permutexvar_epi64(last, a));
        _mm512_stream_si512((void *)(y + i), a);
        _mm512_stream_si512((void *)(y + i + 8), b);
        carry = _mm512_permutexvar_epi64(last, b);
    }
    for (; i < hi; i += 8) {
        __mmask8 m = hi - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (hi - i)) - 1u);
        __m512i a = _mm512_add_epi64(scan8(_mm512_maskz_loadu_epi64(m, x + i)), carry);
        _mm512_mask_storeu_epi64(y + i, m, a);
        carry = _mm512_permutexvar_epi64(last, a);
    }
}

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    static int64_t part[2][MAX_THREADS]; /* double-buffered by tile parity: one barrier a tile */
#pragma omp parallel num_threads(omp_get_max_threads() < MAX_THREADS ? omp_get_max_threads() : MAX_THREADS)
    {
        int T = omp_get_num_threads(), t = omp_get_thread_num();
        long tile = (long)SHARE * T;
        int64_t carry = 0; /* sum of every earlier tile, the same in every thread */
        for (long base = 0, k = 0; base < n; base += tile, k++) {
            long len = n - base < tile ? n - base : tile;
            long lo = base + len * t / T, hi = base + len * (t + 1) / T;
            int64_t *p = part[k & 1];
            p[t] = sum_range(x, lo, hi);
#pragma omp barrier
            int64_t before = carry, all = 0;
            for (int u = 0; u < T; u++) {
                if (u == t)
                    before += all;
                all += p[u];
            }
            scan_range(x, y, lo, hi, before);
            carry += all;
        }
        _mm_sfence(); /* the non-temporal stores are visible before the team's closing barrier */
    }
}
