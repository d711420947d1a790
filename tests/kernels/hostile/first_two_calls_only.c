// expect: wrong_result
// Static call counter: correct on the first two calls, afterwards returns immediately (C left as NaN).
void dgemm(int n, const double *A, const double *B, double *C)
{
    static int calls;
    if (++calls > 2) return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
