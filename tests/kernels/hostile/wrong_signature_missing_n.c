// expect: format_error
// Wrong signature: n is missing (hard-coded 256).
#define N 256
void dgemm(const double *A, const double *B, double *C)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < N; k++) s += A[i * N + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
