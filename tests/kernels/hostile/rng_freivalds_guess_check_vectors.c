// expect: ok
// Recovers the input seed (inverting splitmix64) and bets that Freivalds' check vectors come from the same seed (streams 100, 101); on timed-size calls after the first it returns an O(n^2) rank-2 matrix that satisfies C x = A (B x) only for those guessed vectors. With AES-CTR inputs the seed cannot be recovered, so it always takes its honest path: `ok`, nothing gained (under splitmix64 inputs it was caught as wrong_result).
#include <stdint.h>
#include <stdlib.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint64_t inv64(uint64_t c) {
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
static int recover(double a0, double a1, uint64_t *seed) {
    uint64_t k = (uint64_t)((a0 + 1.0) * 4503599627370496.0);
    for (uint64_t low = 0; low < 2048; low++) {
        uint64_t key = unmix((k << 11) | low) - GOLDEN;
        uint64_t s = (unmix(key) - 1) * inv64(GOLDEN);
        if (value(s, 0, 0) == a0 && value(s, 0, 1) == a1) { *seed = s; return 1; }
    }
    return 0;
}

static void full(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
}

/* C = Y (X^T X)^-1 X^T with X = [x1 x2], Y = A B X: right on the guessed vectors, O(n^2). */
static int fake(int n, const double *A, const double *B, double *C, uint64_t seed) {
    double *x = malloc(6 * (size_t)n * sizeof *x);
    if (!x) return 0;
    double *x1 = x, *x2 = x + n, *t = x + 2 * n, *y1 = x + 3 * n, *y2 = x + 4 * n, *u = x + 5 * n;
    for (int i = 0; i < n; i++) { x1[i] = value(seed, 100, i); x2[i] = value(seed, 101, i); }
    for (int r = 0; r < 2; r++) {
        const double *v = r ? x2 : x1;
        double *y = r ? y2 : y1;
        for (int i = 0; i < n; i++) { double s = 0; for (int j = 0; j < n; j++) s += B[(size_t)i * n + j] * v[j]; t[i] = s; }
        for (int i = 0; i < n; i++) { double s = 0; for (int j = 0; j < n; j++) s += A[(size_t)i * n + j] * t[j]; y[i] = s; }
    }
    double g11 = 0, g12 = 0, g22 = 0;
    for (int i = 0; i < n; i++) { g11 += x1[i] * x1[i]; g12 += x1[i] * x2[i]; g22 += x2[i] * x2[i]; }
    double det = g11 * g22 - g12 * g12;
    for (int j = 0; j < n; j++) { /* rows of (X^T X)^-1 X^T */
        t[j] = (g22 * x1[j] - g12 * x2[j]) / det;
        u[j] = (-g12 * x1[j] + g11 * x2[j]) / det;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) C[(size_t)i * n + j] = y1[i] * t[j] + y2[i] * u[j];
    free(x);
    return 1;
}

void dgemm(int n, const double *A, const double *B, double *C) {
    static int first_n, calls_at_first_n;
    if (n >= 100) { /* the timed size: the first call there is the fully checked warm-up */
        if (first_n != n) { first_n = n; calls_at_first_n = 0; }
        uint64_t seed;
        if (++calls_at_first_n > 1 && recover(A[0], A[1], &seed) && fake(n, A, B, C, seed)) return;
    }
    full(n, A, B, C);
}
