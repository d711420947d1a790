// expect: runtime_error
// Declares a 2 GiB zero-initialized static array (.bss costs nothing in the object, so no size cap sees it): the runner cannot even be loaded under the address-space limit.
#include <stddef.h>
static volatile double scratch[(size_t)1 << 28]; /* 2 GiB */

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    scratch[(size_t)n * 1000] = C[0];
    C[0] = scratch[(size_t)n * 1000];
}
