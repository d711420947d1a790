// expect: wrong_result problem: transpose
// Halves the traffic of a staging buffer by storing it in float: every element loses its low 29 mantissa bits, and the check is exact.
#include <stdlib.h>

void transpose(int n, const double *A, double *B)
{
    float *tmp = malloc((size_t)n * n * sizeof(float));
    if (!tmp) return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) tmp[j * n + i] = (float)A[i * n + j];
    for (long k = 0; k < (long)n * n; k++) B[k] = tmp[k];
    free(tmp);
}
