// expect: forbidden problem: dgemm mode: serial
// Work from the thaw: installs a SIGCONT handler that, each time the measurer thaws the runner for a request (the next inputs already in place), computes the first 7/8 of the rows before the untimed priming request is even posted, leaving 1/8 to the timed call; <signal.h> and sigaction are refused by the source check (and the runner's seccomp filter refuses rt_sigaction).
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

static const double *gA, *gB;
static double *gC;
static volatile int primed;

/* Rows lo..hi-1 of C = A * B: each row zeroed, then one scaled row of B added per k (ikj). */
static void rows(int n, const double *restrict A, const double *restrict B, double *restrict C, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        double *restrict c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(size_t)i * n + k];
            const double *restrict b = B + (size_t)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
}

static void on_thaw(int sig) {
    (void)sig;
    ctl_t *ctl = (ctl_t *)((char *)gA - 4096);
    int m = ctl->n;
    if (m > 0 && isnan(gC[0])) {
        rows(m, gA, gB, gC, 0, m - m / 8);
        primed = m;
    }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    static int installed;
    if (!installed) {
        struct sigaction sa = {0};
        sa.sa_handler = on_thaw;
        sigaction(SIGCONT, &sa, NULL);
        gA = A, gB = B, gC = C;
        installed = 1;
    }
    int lo = primed == n ? n - n / 8 : 0;
    primed = 0;
    rows(n, A, B, C, lo, n);
}
