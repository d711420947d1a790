// expect: wrong_result problem: dot
// AVX2 form of dot_rng_regenerate_inputs.c: recovers the call's input-generator key from three input values (inverting splitmix64, the harness's former generator) and regenerates the inputs in registers instead of reading them, 4 lanes per vector with the 64-bit multiply and the integer-to-double conversion built from AVX2 pieces (the AVX-512 original measured 3.9x the honest rate on transpose, +21% on dot, under that generator). There is no honest fallback, so wrong_result shows the key cannot be recovered from AES-CTR inputs.
#include <stdint.h>
#include <immintrin.h>

#define G 0x9E3779B97F4A7C15ULL
#define C1 0xBF58476D1CE4E5B9ULL
#define C2 0x94D049BB133111EBULL

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * C1;
    z = (z ^ (z >> 27)) * C2;
    return z ^ (z >> 31);
}
static uint64_t inv_odd(uint64_t c) { uint64_t v = c; for (int k = 0; k < 6; k++) v *= 2 - c * v; return v; }
static uint64_t unmix(uint64_t z) {
    z ^= (z >> 31) ^ (z >> 62);
    z *= inv_odd(C2);
    z ^= (z >> 27) ^ (z >> 54);
    z *= inv_odd(C1);
    z ^= (z >> 30) ^ (z >> 60);
    return z;
}
static uint64_t mant(double v) { return (uint64_t)((v + 1.0) * 4503599627370496.0); } /* z >> 11 */

/* key such that v[i] = bench value of mix(key + (i+1)G), or 0 with *ok = 0. */
static uint64_t recover(int n, const double *v, int *ok) {
    *ok = 0;
    if (n < 3) return 0;
    uint64_t m0 = mant(v[0]), m1 = mant(v[1]), m2 = mant(v[n - 1]);
    for (uint64_t low = 0; low < 2048; low++) {
        uint64_t key = unmix((m0 << 11) | low) - G;
        if ((mix(key + 2 * G) >> 11) == m1 && (mix(key + (uint64_t)n * G) >> 11) == m2) { *ok = 1; return key; }
    }
    return 0;
}

/* 64-bit lane multiply (low half), built from 32 x 32 -> 64 products: AVX2 has no 64-bit mullo. */
static inline __m256i mullo64(__m256i a, __m256i b) {
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b), _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
    return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}
static inline __m256i vmix(__m256i z) {
    z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), _mm256_set1_epi64x((long long)C1));
    z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), _mm256_set1_epi64x((long long)C2));
    return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}
/* z >> 11 (53 bits) to double exactly, as two 32-bit halves through the 2^52 exponent trick
 * (AVX2 has no unsigned 64-bit conversion), then scaled to [-1, 1). */
static inline __m256d vval(__m256i z) {
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
    __m256i lo = _mm256_and_si256(_mm256_srli_epi64(z, 11), _mm256_set1_epi64x(0xFFFFFFFFLL));
    __m256d dlo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(lo, magic)), two52);
    __m256d dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(z, 43), magic)), two52);
    __m256d d = _mm256_fmadd_pd(dhi, _mm256_set1_pd(4294967296.0), dlo);
    return _mm256_fmsub_pd(d, _mm256_set1_pd(2.0 / 9007199254740992.0), _mm256_set1_pd(1.0));
}

double dot(int n, const double *x, const double *y) {
    int okx, oky;
    uint64_t kx = recover(n, x, &okx), ky = recover(n, y, &oky);
    if (!okx || !oky) return 0.0; /* no honest fallback: the status shows whether the key came back */
    /* counters key + (i+1)G for lanes i..i+3 */
    __m256i lane = _mm256_set_epi64x((long long)(4 * G), (long long)(3 * G), (long long)(2 * G), (long long)G);
    __m256i cx = _mm256_add_epi64(_mm256_set1_epi64x((long long)kx), lane);
    __m256i cy = _mm256_add_epi64(_mm256_set1_epi64x((long long)ky), lane);
    __m256i step = _mm256_set1_epi64x((long long)(4 * G));
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i cx1 = _mm256_add_epi64(cx, step), cy1 = _mm256_add_epi64(cy, step);
        s0 = _mm256_fmadd_pd(vval(vmix(cx)), vval(vmix(cy)), s0);
        s1 = _mm256_fmadd_pd(vval(vmix(cx1)), vval(vmix(cy1)), s1);
        cx = _mm256_add_epi64(cx1, step);
        cy = _mm256_add_epi64(cy1, step);
    }
    __m256d s4 = _mm256_add_pd(s0, s1);
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    double s = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
    for (; i < n; i++) s += x[i] * y[i];
    return s;
}
