// expect: forbidden
// A static __attribute__((constructor)) that runs before main and warms a cache/prefaults memory.
#include <stdlib.h>
#include <string.h>

static double *scratch;

__attribute__((constructor)) static void lab_init(void)
{
    scratch = malloc(1 << 20);
    if (scratch) memset(scratch, 0, 1 << 20);
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
