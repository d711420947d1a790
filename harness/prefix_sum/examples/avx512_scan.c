// AVX-512 in-register scan (no OpenMP): 8 lanes scanned with three shifted adds (valignq against
// zero), the running carry broadcast from the last lane; two vectors per iteration, masked tail.
#include <immintrin.h>
#include <stdint.h>

static inline __m512i scan8(__m512i v)
{
    const __m512i z = _mm512_setzero_si512();
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 7)); /* + v shifted up one lane */
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 6)); /* + two lanes */
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 4)); /* + four lanes */
    return v;
}

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    const __m512i last = _mm512_set1_epi64(7);
    __m512i carry = _mm512_setzero_si512();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i a = scan8(_mm512_loadu_si512(x + i));
        __m512i b = scan8(_mm512_loadu_si512(x + i + 8));
        a = _mm512_add_epi64(a, carry);
        b = _mm512_add_epi64(b, _mm512_permutexvar_epi64(last, a));
        _mm512_storeu_si512(y + i, a);
        _mm512_storeu_si512(y + i + 8, b);
        carry = _mm512_permutexvar_epi64(last, b);
    }
    for (; i < n; i += 8) {
        __mmask8 m = n - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (n - i)) - 1u);
        __m512i a = _mm512_add_epi64(scan8(_mm512_maskz_loadu_epi64(m, x + i)), carry);
        _mm512_mask_storeu_epi64(y + i, m, a);
        carry = _mm512_permutexvar_epi64(last, a);
    }
}
