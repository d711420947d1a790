// expect: ok threads: 2
// Vector helpers declared with '#pragma omp declare simd' (uniform, linear, notinbranch), called from an 'omp simd' loop; the entry point carries a 'declare simd' too, so the object exports its vector clones (_ZGV..._dgemm), which the build makes local.
#include <stddef.h>

#pragma omp declare simd uniform(row, k) linear(j : 1) notinbranch
static double times(const double *row, int k, int j, double a)
{
    return a * row[(size_t)k + j];
}

#pragma omp declare simd notinbranch
void dgemm(int n, const double *A, const double *B, double *C);

void dgemm(int n, const double *A, const double *B, double *C)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        double *c = &C[(size_t)i * n];
        for (int j = 0; j < n; j++)
            c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(size_t)i * n + k];
#pragma omp simd
            for (int j = 0; j < n; j++)
                c[j] += times(B, k * n, j, a);
        }
    }
}
