// expect: compile_error
// Uses an undeclared identifier (BLOCK) and an undeclared variable (acc).
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i += BLOCK)
        for (int j = 0; j < n; j++) {
            acc = 0.0;
            for (int k = 0; k < n; k++) acc += A[i * n + k] * B[k * n + j];
            C[i * n + j] = acc;
        }
}
