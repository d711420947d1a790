// expect: forbidden
// Calls through a function pointer built from an integer address (address of memset plus a hidden offset).
#include <stdint.h>
#include <string.h>

typedef void *(*fill_fn)(void *, int, size_t);

void dgemm(int n, const double *A, const double *B, double *C)
{
    volatile uintptr_t offset = 0;  /* an attacker would put the distance to system() here */
    uintptr_t addr = (uintptr_t)&memset + offset;
    fill_fn f = (fill_fn)addr;
    f(C, 0, (size_t)n * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++) C[i * n + j] += A[i * n + k] * B[k * n + j];
}
