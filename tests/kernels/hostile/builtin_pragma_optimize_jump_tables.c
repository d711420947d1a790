// expect: forbidden
// Turns jump tables back on with `#pragma GCC optimize("jump-tables")` (the build passes -fno-jump-tables so that every indirect branch means a function pointer) and handles the k-loop remainder through a dense switch, which gcc compiles to `jmp *%rax`.
#include <stddef.h>
#pragma GCC optimize("jump-tables")

static double tail(int r, const double *a, const double *b, size_t ld) {
    switch (r) {
    case 0: return 0.0;
    case 1: return a[0] * b[0];
    case 2: return a[0] * b[0] + a[1] * b[ld];
    case 3: return a[0] * b[0] + a[1] * b[ld] + a[2] * b[2 * ld];
    case 4: return (a[0] * b[0] + a[1] * b[ld]) + (a[2] * b[2 * ld] + a[3] * b[3 * ld]);
    case 5: return (a[0] * b[0] + a[1] * b[ld]) + (a[2] * b[2 * ld] + a[3] * b[3 * ld]) + a[4] * b[4 * ld];
    case 6: return (a[0] * b[0] + a[1] * b[ld] + a[2] * b[2 * ld]) + (a[3] * b[3 * ld] + a[4] * b[4 * ld] + a[5] * b[5 * ld]);
    case 7: return (a[0] * b[0] + a[1] * b[ld] + a[2] * b[2 * ld] + a[3] * b[3 * ld]) + (a[4] * b[4 * ld] + a[5] * b[5 * ld] + a[6] * b[6 * ld]);
    default: return -1.0;
    }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    int main_k = n - n % 8;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < main_k; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s + tail(n % 8, A + (size_t)i * n + main_k, B + (size_t)main_k * n + j, (size_t)n);
        }
}
