// expect: runtime_error
// Computes C, then executes __builtin_trap() (ud2 -> SIGILL) on every call.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    __builtin_trap();
}
