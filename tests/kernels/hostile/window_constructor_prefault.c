// expect: forbidden problem: dgemm mode: serial
// Init-time work: a constructor allocates and pre-faults the kernel's scratch buffer (B transposed) when the runner is loaded, before any request, so no call pays its page faults; code that runs outside every call is refused (the constructor attribute by the source check, .init_array by the object check).
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 4096
static double *bt;

__attribute__((constructor)) static void prefault(void) {
    bt = malloc((size_t)MAX_N * MAX_N * sizeof *bt);
    if (bt) memset(bt, 0, (size_t)MAX_N * MAX_N * sizeof *bt);
}

void dgemm(int n, const double *A, const double *B, double *C) {
    if (!bt || n > MAX_N) {
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
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * bt[(size_t)j * n + k];
            C[(size_t)i * n + j] = s;
        }
}
