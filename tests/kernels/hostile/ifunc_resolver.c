// expect: forbidden
// Uses __attribute__((ifunc)) so a resolver runs at load time (before main) and picks the implementation.
static void dgemm_impl(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

static void (*resolve_dgemm(void))(int, const double *, const double *, double *)
{
    return dgemm_impl;
}

void dgemm(int n, const double *A, const double *B, double *C) __attribute__((ifunc("resolve_dgemm")));
