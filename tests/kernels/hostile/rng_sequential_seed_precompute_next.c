// expect: ok
// Bets that the per-call seeds are sequential: recovers each call's seed from A (inverting splitmix64), precomputes C for seed+1 from regenerated inputs, and returns that precomputed C on the next call without looking at the inputs. With AES-CTR inputs the seed cannot be recovered, so it always takes its honest path: `ok`, nothing gained (under splitmix64 inputs it was caught as wrong_result).
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

static double *next_c, *ga, *gb;
static int next_n;

void dgemm(int n, const double *A, const double *B, double *C) {
    size_t nn = (size_t)n * n;
    if (next_c && next_n == n) { /* committed to the prediction: no look at A or B */
        for (size_t i = 0; i < nn; i++) C[i] = next_c[i];
    } else {
        full(n, A, B, C);
    }
    uint64_t seed;
    if (nn < 2 || !recover(A[0], A[1], &seed)) return;
    free(next_c); free(ga); free(gb);
    next_c = malloc(nn * sizeof *next_c); ga = malloc(nn * sizeof *ga); gb = malloc(nn * sizeof *gb);
    if (!next_c || !ga || !gb) { free(next_c); next_c = NULL; return; }
    for (size_t i = 0; i < nn; i++) { ga[i] = value(seed + 1, 0, i); gb[i] = value(seed + 1, 1, i); }
    full(n, ga, gb, next_c);
    next_n = n;
}
