/*
 * peak.c -- this CPU's floating-point peak on one core: fused multiply-adds on the widest
 * vectors the compiler targets (the lab's tier: -march=native, or a forced tier's level), on enough
 * independent accumulators to hide their latency. lab/harness/plausibility.py runs it once per
 * machine: an `ok` kernel faster than this peak times its threads (with a margin) is `suspicious`.
 * The peak is a property of the core, so each trial is timed in the thread's own CPU time: a
 * process the scheduler lets share the core (the lab holds its own CPU slots, but a neighbour
 * outside the lab does not ask for them) takes wall time, not CPU time, and would lower the peak
 * and so refuse honest kernels. The trials (about 20 ms each) span about half a second; the best
 * counts.
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
/* Independent accumulators: enough to cover the FMA latency on every pipe (4 cycles x 2 pipes on
 * the cores the lab meets), few enough to stay in registers beside x and y. Without AVX-512, x86
 * has 16 vector registers: 16 accumulators spilled three to memory each iteration, and the store
 * and reload chains halved the peak an AVX2 core was calibrated at (33 instead of 59 GFLOP/s on
 * a Zen 4), which then refused honest AVX2 kernels as `suspicious`. */
#if defined(__AVX512F__) || defined(__aarch64__)
#define ACC 16
#else
#define ACC 14
#endif

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void) {
    vec acc[ACC], x, y;
    for (int l = 0; l < LANES; l++) { x[l] = 0.999999; y[l] = 1e-7; }
    for (int a = 0; a < ACC; a++) acc[a] = x * (double)(a + 1);
    double best = 0.0, sink = 0.0;
    for (int trial = 0; trial < 25; trial++) {
        const long iters = 8000000;
        double t0 = cpu_now();
        for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
            for (int a = 0; a < ACC; a++) acc[a] = acc[a] * x + y; /* one FMA each */
            __asm__ volatile("" : KEEP(x));                       /* keep the loop honest */
        }
        double t = cpu_now() - t0;
        double gflops = 2.0 * LANES * ACC * (double)iters / t * 1e-9;
        if (gflops > best) best = gflops;
    }
    for (int a = 0; a < ACC; a++) for (int l = 0; l < LANES; l++) sink += acc[a][l];
    printf("peak_gflops %.3f\nsink %g\n", best, sink);
    return 0;
}
