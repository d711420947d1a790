// expect: wrong_result
// Memoises one result per size n (static table); later calls at the same n copy it without looking at the inputs.
#include <stdlib.h>
#include <string.h>

#define SLOTS 8

void dgemm(int n, const double *A, const double *B, double *C)
{
    static int sizes[SLOTS];
    static double *results[SLOTS];
    const size_t nn = (size_t)n * (size_t)n;

    for (int s = 0; s < SLOTS; s++)
        if (sizes[s] == n && results[s]) {
            memcpy(C, results[s], nn * sizeof(double));
            return;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++) sum += A[i * n + k] * B[k * n + j];
            C[i * n + j] = sum;
        }
    for (int s = 0; s < SLOTS; s++)
        if (!results[s]) {
            results[s] = malloc(nn * sizeof(double));
            if (results[s]) { memcpy(results[s], C, nn * sizeof(double)); sizes[s] = n; }
            break;
        }
}
