/*
 * peak.c -- this CPU's floating-point peak on one core: fused multiply-adds on the widest
 * vectors the compiler targets (the lab's tier: -march=native, or a forced tier's level), on enough independent accumulators to hide
 * their latency. lab/harness/plausibility.py runs it once per machine: an `ok` kernel
 * faster than this peak times its threads (with a margin) is `suspicious`.
 * Prints one line: "peak_gflops <best of several trials>".
 */
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 8
#elif defined(__AVX__)
#define LANES 4
#else
#define LANES 2
#endif
typedef double vec __attribute__((vector_size(LANES * sizeof(double))));
/* The register class of a vector operand: x86's SSE/AVX registers, aarch64's SIMD registers. */
#if defined(__aarch64__)
#define KEEP(v) "+w"(v)
#else
#define KEEP(v) "+v"(v)
#endif
#define ACC 16

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void) {
    vec acc[ACC], x, y;
    for (int l = 0; l < LANES; l++) { x[l] = 0.999999; y[l] = 1e-7; }
    for (int a = 0; a < ACC; a++) acc[a] = x * (double)(a + 1);
    double best = 0.0, sink = 0.0;
    for (int trial = 0; trial < 7; trial++) {
        const long iters = 2000000;
        double t0 = now();
        for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
            for (int a = 0; a < ACC; a++) acc[a] = acc[a] * x + y; /* one FMA each */
            __asm__ volatile("" : KEEP(x));                       /* keep the loop honest */
        }
        double t = now() - t0;
        double gflops = 2.0 * LANES * ACC * (double)iters / t * 1e-9;
        if (gflops > best) best = gflops;
    }
    for (int a = 0; a < ACC; a++) for (int l = 0; l < LANES; l++) sink += acc[a][l];
    printf("peak_gflops %.3f\nsink %g\n", best, sink);
    return 0;
}
