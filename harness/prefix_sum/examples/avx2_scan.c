// AVX2 in-register scan (no OpenMP): 4 lanes scanned with two lane shifts (vpermq + blend with
// zero), the carry broadcast from the last lane; unrolled by two vectors; scalar tail.
#include <immintrin.h>
#include <stdint.h>

static inline __m256i scan4(__m256i v)
{
    const __m256i z = _mm256_setzero_si256();
    /* (0, v0, v1, v2) and (0, 0, v0, v1) */
    v = _mm256_add_epi64(v, _mm256_blend_epi32(_mm256_permute4x64_epi64(v, _MM_SHUFFLE(2, 1, 0, 0)), z, 0x03));
    v = _mm256_add_epi64(v, _mm256_blend_epi32(_mm256_permute4x64_epi64(v, _MM_SHUFFLE(1, 0, 0, 0)), z, 0x0F));
    return v;
}

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    __m256i carry = _mm256_setzero_si256();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = scan4(_mm256_loadu_si256((const __m256i *)(x + i)));
        __m256i b = scan4(_mm256_loadu_si256((const __m256i *)(x + i + 4)));
        a = _mm256_add_epi64(a, carry);
        b = _mm256_add_epi64(b, _mm256_permute4x64_epi64(a, 0xFF));
        _mm256_storeu_si256((__m256i *)(y + i), a);
        _mm256_storeu_si256((__m256i *)(y + i + 4), b);
        carry = _mm256_permute4x64_epi64(b, 0xFF);
    }
    int64_t s = _mm256_extract_epi64(carry, 3);
    for (; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
}
