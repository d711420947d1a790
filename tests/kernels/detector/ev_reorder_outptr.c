// ikj with the output row behind a pointer named out (true: loop_reorder)
#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    memset(C, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) {
        double *out = C + (long)i * n;
        for (int k = 0; k < n; k++) {
            const double a = A[(long)i * n + k], *b = B + (long)k * n;
            for (int j = 0; j < n; j++) out[j] += a * b[j];
        }
    }
}
