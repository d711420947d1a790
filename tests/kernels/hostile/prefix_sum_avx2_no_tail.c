// expect: wrong_result problem: prefix_sum
// AVX2 form of prefix_sum_avx512_no_tail.c: a correct in-register scan of 4 lanes with no tail handling, right only when n is a multiple of 4 (the corpus's n=128), wrong at the odd size 10007, whose last 3 outputs stay poisoned.
#include <immintrin.h>
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    const __m256i z = _mm256_setzero_si256();
    __m256i carry = z;
    for (int i = 0; i + 4 <= n; i += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(x + i));
        /* [0, v0, v1, v2]: lanes shifted up by one */
        v = _mm256_add_epi64(v, _mm256_blend_epi32(_mm256_permute4x64_epi64(v, 0x90), z, 0x03));
        /* [0, 0, v0, v1]: shifted up by two */
        v = _mm256_add_epi64(v, _mm256_permute2x128_si256(v, v, 0x08));
        v = _mm256_add_epi64(v, carry);
        _mm256_storeu_si256((__m256i *)(y + i), v);
        carry = _mm256_permute4x64_epi64(v, 0xFF);
    }
}
