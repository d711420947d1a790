// expect: forbidden
// Inline asm (`__asm__ volatile` rdtsc + a compiler barrier) inside an otherwise correct kernel.
#include <stdint.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    (void)lo; (void)hi;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    asm volatile("" ::: "memory");
}
