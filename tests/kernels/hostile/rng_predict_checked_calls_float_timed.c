// expect: wrong_result
// Predicts which calls get the full check from the fixed call schedule (odd size, warm-up, 5 timed calls, final check): computes in single precision on the guessed timed calls and pins the timed loop to exactly 5 calls by making the 5th one slow, so the median is a fast float call.
#include <stddef.h>

static void exact(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
}

static float fa[512 * 512], fb[512 * 512], fc[512];

/* Single precision throughout: twice the SIMD width, error ~1e-7 relative. */
static void cheap(int n, const double *A, const double *B, double *C) {
    size_t nn = (size_t)n * n;
    for (size_t i = 0; i < nn; i++) { fa[i] = (float)A[i]; fb[i] = (float)B[i]; }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) fc[j] = 0.0f;
        for (int k = 0; k < n; k++) {
            float a = fa[(size_t)i * n + k];
            for (int j = 0; j < n; j++) fc[j] += a * fb[(size_t)k * n + j];
        }
        for (int j = 0; j < n; j++) C[(size_t)i * n + j] = fc[j];
    }
}

static volatile double sink;

void dgemm(int n, const double *A, const double *B, double *C) {
    static int big_calls;
    if (n <= 100 || n > 512) { exact(n, A, B, C); return; } /* the odd size is always checked in full */
    int call = ++big_calls;            /* 1: warm-up (full check), 2..6: timed, 7: final full check */
    if (call == 1 || call > 6) { exact(n, A, B, C); return; }
    cheap(n, A, B, C);
    if (call == 6) {                   /* burn ~0.3 s: min_time is reached here, so exactly 5 timed calls */
        double x = 1.0;
        for (volatile long i = 0; i < 300000000L; i++) x = x * 0.999999999 + 1e-9;
        sink = x;
    }
}
