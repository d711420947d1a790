// expect: runtime_error
// A 1250 MiB static array touched page by page on the first call: past the kernel's 1024 MiB budget (MeasureConfig.memory_mb), but the runner's address-space limit and the run's cgroup are both budget + the measurer's 256 MiB, and the measurer needs only a few MiB, so the kernel really gets about 1.27 GiB.
#include <stddef.h>
#define WORDS ((size_t)1250 << 17) /* 1250 MiB of doubles */
static volatile double scratch[WORDS];

void dgemm(int n, const double *A, const double *B, double *C) {
    static int touched;
    if (!touched) {
        for (size_t i = 0; i < WORDS; i += 512) scratch[i] = (double)i;
        touched = 1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    C[0] += scratch[(size_t)n] * 0.0;
}
