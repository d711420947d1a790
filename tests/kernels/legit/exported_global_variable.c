// expect: ok
// A non-static global variable besides dgemm: localized at link time, so it shadows nothing.
double dgemm_call_count;

void dgemm(int n, const double *A, const double *B, double *C)
{
    dgemm_call_count += 1.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
