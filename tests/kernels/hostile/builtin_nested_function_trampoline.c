// expect: forbidden
// Takes the address of a GNU C nested function, which makes gcc build an executable trampoline on the stack (and mark the stack executable), then calls through it.
#include <stddef.h>

static void apply(void (*f)(int), int n) { for (int i = 0; i < n; i++) f(i); }

void dgemm(int n, const double *A, const double *B, double *C) {
    void row(int i) {
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    }
    apply(row, n);
}
