// expect: wrong_result
// Computes C correctly but also writes past the end of the n*n arrays it was given (into the page-aligned slack the shared region keeps after A, B and C at every size below the largest): out-of-bounds writes that only inputs within n*n are compared for.
#include <stddef.h>

void dgemm(int n, const double *A, const double *B, double *C) {
    size_t nn = (size_t)n * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    if (nn < 100 * 100) { /* the odd size: its arrays sit in buffers sized for the timed size */
        double *a_tail = (double *)(A + nn), *b_tail = (double *)(B + nn);
        for (size_t i = 0; i < 64; i++) { a_tail[i] = 12345.0; b_tail[i] = -12345.0; C[nn + i] = 1e300; }
    }
}
