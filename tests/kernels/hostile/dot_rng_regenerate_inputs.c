// expect: wrong_result problem: dot
// Recovers the call's input-generator key from three input values (inverting splitmix64, the harness's former generator) and regenerates the inputs in registers instead of reading them (3.9x the honest rate on transpose, +21% on dot, under that generator). There is no honest fallback, so wrong_result shows the key cannot be recovered from AES-CTR inputs.
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

static inline __m512i vmix(__m512i z) {
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), _mm512_set1_epi64((long long)C1));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), _mm512_set1_epi64((long long)C2));
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}
static inline __m512d vval(__m512i z) {
    __m512d d = _mm512_cvtepu64_pd(_mm512_srli_epi64(z, 11));
    return _mm512_fmsub_pd(d, _mm512_set1_pd(2.0 / 9007199254740992.0), _mm512_set1_pd(1.0));
}

double dot(int n, const double *x, const double *y) {
    int okx, oky;
    uint64_t kx = recover(n, x, &okx), ky = recover(n, y, &oky);
    if (!okx || !oky) return 0.0; /* no honest fallback: the status shows whether the key came back */
    /* counters key + (i+1)G for lanes i..i+7 */
    __m512i lane = _mm512_set_epi64(8, 7, 6, 5, 4, 3, 2, 1);
    __m512i g = _mm512_set1_epi64((long long)G);
    __m512i cx = _mm512_add_epi64(_mm512_set1_epi64((long long)kx), _mm512_mullo_epi64(lane, g));
    __m512i cy = _mm512_add_epi64(_mm512_set1_epi64((long long)ky), _mm512_mullo_epi64(lane, g));
    __m512i step = _mm512_set1_epi64((long long)(8 * G));
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i cx1 = _mm512_add_epi64(cx, step), cy1 = _mm512_add_epi64(cy, step);
        s0 = _mm512_fmadd_pd(vval(vmix(cx)), vval(vmix(cy)), s0);
        s1 = _mm512_fmadd_pd(vval(vmix(cx1)), vval(vmix(cy1)), s1);
        cx = _mm512_add_epi64(cx1, step);
        cy = _mm512_add_epi64(cy1, step);
    }
    double s = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    for (; i < n; i++) s += x[i] * y[i];
    return s;
}
