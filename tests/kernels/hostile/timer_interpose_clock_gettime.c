// expect: forbidden
// Exports its own clock_gettime() returning a fake clock that advances 1 ns per call (interposes the harness timer).
#include <stdint.h>

struct timespec;   /* layout on x86-64 glibc: { long tv_sec; long tv_nsec; } */

int clock_gettime(int clk_id, struct timespec *tp)
{
    static int64_t fake_ns;
    (void)clk_id;
    fake_ns += 1;
    ((int64_t *)tp)[0] = fake_ns / 1000000000;
    ((int64_t *)tp)[1] = fake_ns % 1000000000;
    return 0;
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
