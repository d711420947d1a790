// expect: forbidden
// Writes a canary file with fopen/fprintf from inside the kernel.
#include <stdio.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    FILE *f = fopen("/tmp/lab_escape_canary_file_write_fopen", "w");
    if (f) { fprintf(f, "kernel escaped the sandbox, n=%d\n", n); fclose(f); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
