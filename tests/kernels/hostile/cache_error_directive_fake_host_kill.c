// expect: compile_error
// An #error whose text is gcc's "Killed signal terminated program cc1": the harness reads that phrase in the log as the host killing the compiler, so a plain compile error is retried and never cached (and reported as the host's fault).
#include <stddef.h>
#error Killed signal terminated program cc1

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}
