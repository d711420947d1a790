// expect: wrong_result problem: transpose
// Recovers the call's input-generator key from three input values (inverting splitmix64, the harness's former generator) and regenerates the inputs in registers instead of reading them (3.9x the honest rate on transpose, +21% on dot, under that generator). There is no honest fallback, so wrong_result shows the key cannot be recovered from AES-CTR inputs.
#include <stdint.h>
#include <stddef.h>
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
static uint64_t mant(double v) { return (uint64_t)((v + 1.0) * 4503599627370496.0); }
static double sval(uint64_t z) { return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0; }
/* key of a bench_fill stream from v[0], v[1], checked against v[last]; *ok = 0 if none */
static uint64_t recover(size_t count, const double *v, int *ok) {
    *ok = 0;
    if (count < 3) return 0;
    uint64_t m0 = mant(v[0]), m1 = mant(v[1]), m2 = mant(v[count - 1]);
    for (uint64_t low = 0; low < 2048; low++) {
        uint64_t key = unmix((m0 << 11) | low) - G;
        if ((mix(key + 2 * G) >> 11) == m1 && (mix(key + (uint64_t)count * G) >> 11) == m2) { *ok = 1; return key; }
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
void transpose(int n, const double *A, double *B) {
    size_t N = (size_t)n;
    int ok;
    uint64_t key = recover(N * N, A, &ok);
    if (!ok) return; /* no honest fallback: the status shows whether the key came back */
    /* B[j][i] = A[i][j]: counter key + (i*N + j + 1) G; along a row of B, i steps by 1 => +N*G */
    __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    __m512i laneNG = _mm512_mullo_epi64(lane, _mm512_set1_epi64((long long)(N * G)));
    __m512i step = _mm512_set1_epi64((long long)(8 * N * G));
    for (size_t j = 0; j < N; j++) {
        double *row = B + j * N;
        __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)(key + (j + 1) * G)), laneNG);
        size_t i = 0;
        for (; i + 8 <= N; i += 8) {
            _mm512_storeu_pd(row + i, vval(vmix(c)));
            c = _mm512_add_epi64(c, step);
        }
        for (; i < N; i++) row[i] = sval(mix(key + (i * N + j + 1) * G));
    }
}
