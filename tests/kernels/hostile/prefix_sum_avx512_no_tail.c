// expect: wrong_result problem: prefix_sum
// A correct AVX-512 in-register scan with no tail handling: right only when n is a multiple of 8 (the corpus's n=128), wrong at the odd size 10007, whose last 7 outputs stay poisoned.
#include <immintrin.h>
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    const __m512i z = _mm512_setzero_si512(), last = _mm512_set1_epi64(7);
    __m512i carry = z;
    for (int i = 0; i + 8 <= n; i += 8) {
        __m512i v = _mm512_loadu_si512(x + i);
        v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 7));
        v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 6));
        v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 4));
        v = _mm512_add_epi64(v, carry);
        _mm512_storeu_si512(y + i, v);
        carry = _mm512_permutexvar_epi64(last, v);
    }
}
