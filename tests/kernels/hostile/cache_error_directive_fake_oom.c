// expect: compile_error
// An #error whose text says "virtual memory exhausted": the log is classified by its words, so an ordinary error is reported (and cached) as the compiler exceeding the memory limit.
#include <stddef.h>
#error virtual memory exhausted: Cannot allocate memory

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}
