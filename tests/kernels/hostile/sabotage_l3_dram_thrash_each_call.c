// expect: ok
// A correct kernel that also streams a 64 MiB buffer on every call, evicting the shared L3 and loading DRAM while it runs: harmless to its own verdict, but nothing isolates the other core slot's timed calls (or its baseline) from this traffic.
#include <stddef.h>
#include <stdlib.h>

static double *junk;
#define JUNK_WORDS ((size_t)8 << 20) /* 64 MiB */

void dgemm(int n, const double *A, const double *B, double *C) {
    if (!junk) junk = calloc(JUNK_WORDS, sizeof *junk);
    if (junk)
        for (size_t i = 0; i < JUNK_WORDS; i += 8) junk[i] += 1.0; /* one write per cache line */
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
}
