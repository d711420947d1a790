// expect: wrong_result
// Inverts the input generator on A[0..1] to recover the call's seed, then computes C from inputs regenerated from it (reads only two entries of A). It worked (`ok`) while the inputs came from splitmix64; from AES-CTR the recovered seed is wrong, so C is wrong.
#include <stdint.h>
#include <stdlib.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint64_t inv64(uint64_t c) { /* inverse of an odd number mod 2^64 (Newton) */
    uint64_t x = c;
    for (int i = 0; i < 6; i++) x *= 2 - c * x;
    return x;
}
static uint64_t unmix(uint64_t z) {
    z = z ^ (z >> 31) ^ (z >> 62);
    z *= inv64(0x94D049BB133111EBULL);
    z = z ^ (z >> 27) ^ (z >> 54);
    z *= inv64(0xBF58476D1CE4E5B9ULL);
    return z ^ (z >> 30) ^ (z >> 60);
}
static double value(uint64_t seed, uint64_t stream, size_t i) {
    uint64_t key = mix(seed * GOLDEN + stream + 1);
    uint64_t z = mix(key + (uint64_t)(i + 1) * GOLDEN);
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
/* The seed whose stream 0 starts with a0, a1 (2048 candidates for the 11 lost bits). */
static int recover(double a0, double a1, uint64_t *seed) {
    uint64_t k = (uint64_t)((a0 + 1.0) * 4503599627370496.0);
    for (uint64_t low = 0; low < 2048; low++) {
        uint64_t key = unmix((k << 11) | low) - GOLDEN;
        uint64_t s = (unmix(key) - 1) * inv64(GOLDEN);
        if (value(s, 0, 0) == a0 && value(s, 0, 1) == a1) { *seed = s; return 1; }
    }
    return 0;
}

void dgemm(int n, const double *A, const double *B, double *C) {
    (void)B;
    size_t nn = (size_t)n * n;
    uint64_t seed = 0;
    if (nn < 2) { if (n == 1) C[0] = A[0] * B[0]; return; }
    if (!recover(A[0], A[1], &seed)) return; /* committed: C stays poisoned if recovery fails */
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    if (!a || !b) { free(a); free(b); return; }
    for (size_t i = 0; i < nn; i++) { a[i] = value(seed, 0, i); b[i] = value(seed, 1, i); }
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double x = a[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += x * b[(size_t)k * n + j];
        }
    }
    free(a); free(b);
}
