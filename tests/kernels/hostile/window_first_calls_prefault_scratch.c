// expect: ok problem: dgemm mode: serial
// Set-up in the untimed calls: the packing buffer (B transposed) is allocated and pre-faulted whenever a call is larger than any before, which happens only in the untimed calls (the first odd-size call, the warm-up call at the timed size), so the timed calls never pay its page faults; every call still packs and multiplies its own inputs, so this is amortized set-up, not work moved out of the window: ok under both protocols.
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C) {
    static double *bt;
    static size_t cap;
    size_t nn = (size_t)n * (size_t)n;
    if (nn > cap) {
        double *grown = realloc(bt, nn * sizeof *bt);
        if (grown) {
            memset(grown, 0, nn * sizeof *grown); /* fault every page in now */
            bt = grown, cap = nn;
        }
    }
    if (nn > cap) { /* no buffer: the plain loop */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
                C[(size_t)i * n + j] = s;
            }
        return;
    }
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++) bt[(size_t)j * n + k] = B[(size_t)k * n + j];
    for (int i = 0; i < n; i++) {
        const double *a = A + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            const double *b = bt + (size_t)j * n;
            double s = 0.0;
            for (int k = 0; k < n; k++) s += a[k] * b[k];
            C[(size_t)i * n + j] = s;
        }
    }
}
