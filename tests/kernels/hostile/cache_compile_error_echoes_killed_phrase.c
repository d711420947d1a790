// expect: compile_error
// A genuine compile error (an undeclared identifier) on a line that also holds the string "Killed signal terminated program": gcc echoes the line in its diagnostic, the harness takes the phrase for a host kill, and the broken kernel is retried and never cached.
#include <stddef.h>

void dgemm(int n, const double *A, const double *B, double *C) {
    const char *note = "Killed signal terminated program"; double scale = undeclared_scale;
    (void)note;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s * scale;
        }
}
