// expect: forbidden
// Declares dlsym by hand (handle 0 = RTLD_DEFAULT) and assembles the symbol name at run time to hide "cblas_dgemm".
#include <string.h>
extern void *dlsym(void *handle, const char *symbol);

typedef void (*gemm_fn)(int, int, int, int, int, int, double, const double *, int,
                        const double *, int, double, double *, int);

void dgemm(int n, const double *A, const double *B, double *C)
{
    char name[16];
    memcpy(name, "cblas_", 6);
    memcpy(name + 6, "dgemm", 6);
    gemm_fn f = (gemm_fn)dlsym((void *)0, name);
    if (f) { f(101, 111, 111, n, n, n, 1.0, A, n, B, n, 0.0, C, n); return; }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
