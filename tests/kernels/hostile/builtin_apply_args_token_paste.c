// expect: forbidden
// Builds __builtin_apply_args / __builtin_apply by token pasting (no piece looks like a builtin in the raw text) to forward the call's own arguments through an untyped call.
#include <stddef.h>
#define CAT(a, b) a##b
#define BI(x) CAT(__buil, x)

static void product(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    void *args = BI(tin_apply_args)();
    BI(tin_apply)((void (*)())product, args, 64);
    (void)n; (void)A; (void)B; (void)C;
}
