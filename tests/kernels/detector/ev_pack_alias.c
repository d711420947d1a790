// Packing (transposed copy of B into a heap buffer) through an alias pointer (true: packing; dot products over Bt rows)
#include <stdlib.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    double *Bt = malloc(sizeof(double) * n * n);
    const double *src = B;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++) Bt[(long)j * n + k] = src[(long)k * n + j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(long)i * n + k] * Bt[(long)j * n + k];
            C[(long)i * n + j] = s;
        }
    free(Bt);
}
